# The two commands: `make run` and `make test`. Both create .venv when it is missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
ARGS   ?=
PYTEST_ARGS ?=
# the suite runs in 5 workers (pytest-xdist; one file's tests stay on one worker): its tests wait on
# servers and browsers more than they compute (3 workers used 1.1 of the 2 cores), so 5 keep it busy
JOBS ?= 5

.PHONY: run test test-python test-packages bench soak wheel clean systemd-check arm-check image pi-check

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip > /dev/null 2>&1 || $(BIN)/python -m pip install -q --upgrade pip

# pip's and the build's chatter goes to .venv/install.log (shown only when the install fails), so the
# first thing `make run` shows is the address and the QR code
$(VENV)/.installed: pyproject.toml setup.py | $(BIN)/python
	@echo "installing companion into $(VENV) (log: $(VENV)/install.log)"
	@$(BIN)/python -m pip install -q -e . > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $@

$(VENV)/.installed-dev: pyproject.toml setup.py | $(BIN)/python
	@echo "installing companion and its test tools into $(VENV) (log: $(VENV)/install.log)"
	@$(BIN)/python -m pip install -q -e '.[dev]' > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $(VENV)/.installed $@

# as systemd/install.sh does after an install: the pages' templates compiled into the data folder's cache
# first (`serve --precompile`, quiet; a start then compiles none), and the code's bytecode kept in
# __pycache__/ even where PYTHONDONTWRITEBYTECODE is set (else every start compiles companion from source);
# web/static's text files compressed ahead (<file>.gz, ignored by git; quick when they are up to date): the
# box sends them compressed without compressing anything, as from a wheel (companion/base/precompressed.py)
run: $(VENV)/.installed
	@$(BIN)/python -m companion.base.precompressed web/static
	@PYTHONDONTWRITEBYTECODE= $(BIN)/companion serve --precompile $(ARGS) > /dev/null
	@PYTHONDONTWRITEBYTECODE= $(BIN)/companion serve $(ARGS)

# PYTHONDONTWRITEBYTECODE= : the suite's Python processes (its workers, and the servers and CLI runs they start by
# the hundred) compile companion and rewrite the tests once, into __pycache__/ (ignored by git), where that
# variable is set in the environment (each process compiled them again: 10 CPU-s per worker's collection alone)
test: test-packages $(VENV)/.installed-dev
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(JOBS) --dist loadfile --durations=25 $(PYTEST_ARGS)

# the Debian packages of the test group of systemd/debian-packages.txt that are missing, installed first (as
# root, or by `sudo -n`; apt's output into $(VENV)/apt-install.log); where it cannot, `make test` stops before
# the first test, naming the command that installs them
test-packages:
	@tests/need-debian-packages.sh --for "make test" --log $(VENV)/apt-install.log \
	    --or "make test-python (the tiers that need nothing outside Python)" test

# the tiers that need nothing outside Python: the browser tier is skipped (its tests are counted in the last
# lines, by reason), as are the tests of a missing tool
test-python: $(VENV)/.installed-dev
	PYTHONDONTWRITEBYTECODE= COMPANION_PYTHON_ONLY=1 $(BIN)/python -m pytest -n $(JOBS) --dist loadfile $(PYTEST_ARGS)

# `make bench PI=1`: the Pi budget (the server or the CLI alone in a calibrated cgroup, as root; see
# bench/pi.py); FSYNC_MS=8 adds that delay to every fsync of the process under test (an SD card)
bench: $(VENV)/.installed-dev
	$(BIN)/python -m bench $(if $(PI),--pi) $(if $(FSYNC_MS),--fsync-ms $(FSYNC_MS))

soak: $(VENV)/.installed-dev
	COMPANION_SOAK=1 $(BIN)/python -m pytest -m slow $(PYTEST_ARGS)

# install.sh under a real systemd: a Debian 12 root (mmdebstrap) booted with systemd-nspawn; needs root, the
# systemd-check group of systemd/debian-packages.txt (installed first where it can be) and Debian's mirror
# (tests/test_systemd_container.py)
systemd-check: $(VENV)/.installed-dev
	@tests/need-debian-packages.sh --for "make systemd-check" --log $(VENV)/apt-install.log --go-on systemd-check
	COMPANION_SYSTEMD_CONTAINER=1 $(BIN)/python -m pytest -n 0 -p no:cacheprovider tests/test_systemd_container.py

# the offline bundle installed on a Pi's processor: Debian 12 arm64 and armhf roots under qemu-user, in a chroot
# with no network (docs/pi.md, "Checking the installer"); skips, saying why, where it cannot run
arm-check: $(VENV)/.installed-dev
	@tests/need-debian-packages.sh --for "make arm-check" --log $(VENV)/apt-install.log --go-on arm-check
	COMPANION_ARM_CHROOT=1 $(BIN)/python -m pytest -n 0 -p no:cacheprovider -s -rs tests/test_arm_chroot.py \
	    $(if $(ARCH),-k $(ARCH))

# the file to flash onto a Pi 3, 4 or Zero 2 W's SD card: build/image/companion-pi.img (docs/pi.md, "Flashing the
# image"); needs root and Debian's mirror; its Debian tree is cached in ~/.cache/companion-image
image: $(VENV)/.installed
	@tests/need-debian-packages.sh --for "make image" --log $(VENV)/apt-install.log image-build
	nice -n 10 $(BIN)/python image/build.py

# that image booted in qemu-system-aarch64 (virt machine, its own kernel): build/pi-check/report.json and the
# logs of every step beside it (docs/pi.md, "Checking the image"); its fifth boot meets simulated GPIO, Bluetooth
# and Wi-Fi through the real drivers and stacks (HW=0 leaves it out)
pi-check: image
	@tests/need-debian-packages.sh --for "make pi-check" --log $(VENV)/apt-install.log pi-check $(if $(filter 0,$(HW)),,pi-check-hw)
	COMPANION_PI_CHECK_HW=$(if $(filter 0,$(HW)),0,1) nice -n 10 $(BIN)/python image/pi_check.py

wheel: $(VENV)/.installed-dev
	systemd/build-wheel.sh . dist "$(BIN)/python -m pip"

clean:
	rm -rf build dist *.egg-info test-artifacts
