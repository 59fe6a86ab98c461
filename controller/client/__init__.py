"""Drive a robot from Python (controller/client/robot.py):

    from controller.client import Robot

    with Robot() as robot:
        robot.stand()
        robot.walk(vx=0.3, seconds=3)
"""
from controller.client.robot import Odometry, Refused, Robot, State

__all__ = ["Odometry", "Refused", "Robot", "State"]
