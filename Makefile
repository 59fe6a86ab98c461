# motiond: `make run` sets everything up the first time, then starts the daemon
# on the simulated robot; `make test` runs the test suite in a private network
# namespace. See README.md.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
ARGS   ?=

KERNEL_SRC := $(wildcard csrc/*.c csrc/*.h) csrc/build_kernel.py
LCM_SRC    := $(wildcard lcmtypes/*.lcm)
MSGS       := controller/msgs/__init__.py
DEPS_STAMP := $(VENV)/.deps-installed
KERNEL_STAMP := controller/.kernel-built
WHEELHOUSE := $(VENV)/wheelhouse

.PHONY: all build run sim test bench system-deps types kernel wheelhouse dist clean distclean

all: build

build: system-deps $(DEPS_STAMP) $(MSGS) $(KERNEL_STAMP)

run: build
	$(VENV)/bin/motiond --sim $(ARGS)

# Every test that opens a udpm:// socket must stay off the host network: the
# whole suite runs inside a fresh network namespace (tests/netns.sh).
test: build wheelhouse
	tests/netns.sh $(PY) -m pytest -q $(ARGS)

# Benchmarks report medians and ratios against a baseline measured in the same
# run. They open no sockets; any that does must run under tests/netns.sh.
bench: build
	@for b in tests/bench/*_bench.py; do $(PY) $$b || exit 1; done

# The lcm wheel links against glib's shared library (Debian: libglib2.0-0);
# the tests need unshare (util-linux) and ip (iproute2).
system-deps:
	@missing=""; \
	ldconfig -p 2>/dev/null | grep -q 'libglib-2.0.so.0' || missing="$$missing libglib2.0-0"; \
	command -v ip >/dev/null 2>&1 || missing="$$missing iproute2"; \
	command -v unshare >/dev/null 2>&1 || missing="$$missing util-linux"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing system packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "missing system packages; install them with:"; \
	    echo "  sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

$(PY):
	$(PYTHON) -m venv $(VENV)

$(DEPS_STAMP): pyproject.toml | $(PY)
	$(PIP) install "setuptools>=68" wheel "cffi>=1.16" "lcm>=1.5" numpy pyyaml structlog pytest
	touch $@

# Python bindings for lcmtypes/, regenerated from scratch so removed types vanish.
$(MSGS): $(LCM_SRC) $(DEPS_STAMP)
	rm -rf controller/msgs
	$(VENV)/bin/lcm-gen --python --ppath controller $(LCM_SRC)
	@test -f $@ || { echo "lcm-gen did not produce $@"; exit 1; }

types: $(MSGS)

# The editable install builds the cffi kernel in place and installs the
# console scripts (motiond, motionctl) into the venv.
$(KERNEL_STAMP): $(KERNEL_SRC) $(MSGS) pyproject.toml setup.py
	$(PIP) install --no-build-isolation --no-deps -e .
	touch $@

kernel: $(KERNEL_STAMP)

# Wheels of the runtime dependencies (pyproject.toml), fetched here, outside the
# network namespace: tests/test_packaging.py installs the built wheel into a
# fresh venv inside it, where no package index can be reached.
$(WHEELHOUSE)/.stamp: pyproject.toml $(DEPS_STAMP)
	rm -rf $(WHEELHOUSE) && mkdir -p $(WHEELHOUSE)
	$(PY) -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > $(WHEELHOUSE)/requirements.txt
	$(PIP) wheel -w $(WHEELHOUSE) -r $(WHEELHOUSE)/requirements.txt
	touch $@

wheelhouse: $(WHEELHOUSE)/.stamp

# The sdist, and the wheel built from it, in dist/.
dist: $(DEPS_STAMP)
	rm -rf dist *.egg-info
	$(PY) -c "from setuptools import build_meta as b; b.build_sdist('dist')"
	$(PIP) wheel --no-deps --no-build-isolation -w dist dist/*.tar.gz

clean:
	rm -rf build dist controller/msgs controller/_kernel.* controller/*.o $(KERNEL_STAMP) *.egg-info
	find . -name __pycache__ -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
