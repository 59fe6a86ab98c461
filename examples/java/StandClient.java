// StandClient: make a CyberDog 2 compatible controller (motiond) stand up.
//
// It sends robot_control_cmd mode 12 (recovery stand), gait 0, re-sends the
// same command every 100 ms as the heartbeat (the controller lies the robot
// down 0.5 s after the last one), and prints robot_control_response whenever
// it changes, until the response shows mode 12 gait 0 at
// order_process_bar >= 95.
//
// Exit codes: 0 standing, 1 usage or LCM error, 3 timeout.
//
// Commands and responses travel on different UDP ports (7671 and 7670 in
// motiond's config), so the client opens one LCM instance for each.

import java.io.IOException;
import java.util.Random;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import lcm.lcm.LCM;
import msgs.robot_control_cmd_lcmt;
import msgs.robot_control_response_lcmt;

public class StandClient {
    static final byte STAND_MODE = 12;
    static final byte STAND_GAIT = 0;
    static final int DONE_BAR = 95;               // the official examples' "finished" threshold
    static final long HEARTBEAT_NS = 100_000_000L;

    static final String USAGE = String.join("\n",
        "usage: stand_client [--cmd-url URL] [--resp-url URL] [--prefix P]",
        "                    [--cmd-channel NAME] [--resp-channel NAME] [--timeout S]",
        "  --cmd-url URL       where commands go (default udpm://239.255.76.67:7671?ttl=0)",
        "  --resp-url URL      where responses come from (default udpm://239.255.76.67:7670?ttl=0)",
        "  --prefix P          put P before both channel names (a namespaced daemon)",
        "  --cmd-channel NAME  default robot_control_cmd",
        "  --resp-channel NAME default robot_control_response",
        "  --timeout S         give up after S seconds (default 10)");

    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String[] args) {
        String cmdUrl = "udpm://239.255.76.67:7671?ttl=0";
        String respUrl = "udpm://239.255.76.67:7670?ttl=0";
        String prefix = "", cmdName = "robot_control_cmd", respName = "robot_control_response";
        double timeout = 10.0;

        for (int i = 0; i < args.length; i++) {
            String opt = args[i];
            if (opt.equals("-h") || opt.equals("--help")) {
                System.out.println(USAGE);
                return 0;
            }
            if (i + 1 >= args.length) {
                System.err.println("stand_client: " + opt + " needs a value\n" + USAGE);
                return 1;
            }
            String val = args[++i];
            switch (opt) {
                case "--cmd-url": cmdUrl = val; break;
                case "--resp-url": respUrl = val; break;
                case "--prefix": prefix = val; break;
                case "--cmd-channel": cmdName = val; break;
                case "--resp-channel": respName = val; break;
                case "--timeout":
                    try {
                        timeout = Double.parseDouble(val);
                    } catch (NumberFormatException e) {
                        timeout = Double.NaN;
                    }
                    if (!(timeout > 0)) {
                        System.err.println("stand_client: --timeout wants seconds > 0, not " + val);
                        return 1;
                    }
                    break;
                default:
                    System.err.println("stand_client: unknown option " + opt + "\n" + USAGE);
                    return 1;
            }
        }
        String cmdChannel = prefix + cmdName, respChannel = prefix + respName;

        LCM cmdLcm, respLcm;
        try {
            cmdLcm = new LCM(cmdUrl);
            respLcm = new LCM(respUrl);
        } catch (IOException | IllegalArgumentException e) {
            System.err.println("stand_client: cannot open LCM: " + e.getMessage());
            return 1;
        }
        // LCM calls the subscriber on its own thread; the main thread takes
        // the responses from this queue between heartbeats. LCM reads the
        // channel as a regular expression: quote it to match the name only.
        LinkedBlockingQueue<robot_control_response_lcmt> responses = new LinkedBlockingQueue<>();
        respLcm.subscribe(Pattern.quote(respChannel), (lcm, channel, ins) -> {
            try {
                responses.add(new robot_control_response_lcmt(ins));
            } catch (IOException e) {
                System.err.println("stand_client: undecodable response: " + e.getMessage());
            }
        });

        robot_control_cmd_lcmt cmd = new robot_control_cmd_lcmt();  // every other field 0
        cmd.mode = STAND_MODE;
        cmd.gait_id = STAND_GAIT;
        cmd.life_count = freshLifeCount();
        System.out.printf("sending mode %d gait %d life_count %d on %s (%s), responses from %s (%s)%n",
                          cmd.mode, cmd.gait_id, cmd.life_count, cmdChannel, cmdUrl, respChannel, respUrl);

        long start = System.nanoTime();
        long deadline = start + (long) (timeout * 1e9), nextBeat = start;
        robot_control_response_lcmt last = null;
        try {
            while (true) {
                long now = System.nanoTime();
                if (now >= deadline) {
                    System.out.printf("timeout: no mode %d gait %d at order_process_bar >= %d within %s s (%s)%n",
                                      STAND_MODE, STAND_GAIT, DONE_BAR, timeout,
                                      last == null ? "no response received" : "last response: " + describe(last));
                    return 3;
                }
                if (now >= nextBeat) {                 // first send, then the heartbeat
                    cmdLcm.publish(cmdChannel, cmd);
                    nextBeat += HEARTBEAT_NS;
                    if (nextBeat < now)                // fell behind: no burst of catch-up sends
                        nextBeat = now + HEARTBEAT_NS;
                }
                robot_control_response_lcmt r =
                    responses.poll(Math.min(nextBeat, deadline) - now, TimeUnit.NANOSECONDS);
                if (r == null)
                    continue;
                // Responses come at 50 Hz: print only the ones that say something new.
                if (last == null || !describe(r).equals(describe(last)))
                    System.out.printf("%6.2f s  response: %s%n", (System.nanoTime() - start) / 1e9, describe(r));
                last = r;
                if (r.mode == STAND_MODE && r.gait_id == STAND_GAIT && r.order_process_bar >= DONE_BAR) {
                    System.out.printf("done: mode %d gait %d at order_process_bar %d after %.2f s%n",
                                      r.mode, r.gait_id, r.order_process_bar, (System.nanoTime() - start) / 1e9);
                    return 0;
                }
            }
        } catch (InterruptedException e) {
            return 1;
        }
        // No more heartbeats after return: the controller lies the robot down
        // 0.5 s later. main's System.exit ends LCM's receive threads.
    }

    static String describe(robot_control_response_lcmt r) {
        return String.format("mode %d gait %d switch_status %d order_process_bar %d",
                             r.mode, r.gait_id, r.switch_status, r.order_process_bar);
    }

    // The controller takes a command only when its life_count differs from the
    // last one it accepted (initially -1), and remembers that value for as long
    // as it runs; the heartbeat repeats the same value. A random value other
    // than -1 matches what a previous client left with a chance of 1 in 255, and
    // then the command is ignored and this client times out: run it again.
    // `motionctl send` avoids even that by reading last_life_count from
    // motiond's controller_status and adding one.
    static byte freshLifeCount() {
        int value = new Random().nextInt(255) - 128;  // -128..126
        return (byte) (value == -1 ? 127 : value);
    }
}
