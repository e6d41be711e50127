# The playground's two commands for a new user are `make bench` and `make test`; everything
# they need (a virtualenv, base images, the project's images) is made here from nothing.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# pytest is started by path, never as `python -m pytest`: that would put the repository root
# on sys.path, where the `psycopg2/` folder would shadow the real psycopg2 package.
PYTEST := $(VENV)/bin/pytest
PLAYGROUND := $(VENV)/bin/playground
# The official image the registry check asks for; see base-images below.
PROBE_IMAGE := python:3.13.9-slim-trixie
# The compose files `make down` stops: the registry's (scenarios.SCENARIO_FILES and
# demos.DEMO_FILES, and the story's), which a unit test keeps these lists equal to.
SCENARIO_FILES := sync-devserver.yml async-gevent-pywsgi.yml sync-gunicorn.yml \
	async-gevent-gunicorn.yml sync-uwsgi.yml async-gevent-uwsgi.yml nginx-gunicorn.yml \
	nginx-uwsgi.yml bonus-psycopg2-gevent.yml
DEMO_FILES := demos/uwsgi-sleep.yml demos/gunicorn-workers.yml demos/sanic.yml \
	demos/wrk-workers.yml
STORY_FILES := story/uwsgi-threads.yml story/uwsgi-gevent.yml story/gunicorn-threads.yml \
	story/gunicorn-gevent.yml story/granian.yml story/granian-backpressure.yml \
	story/uvicorn-a2wsgi.yml story/flask-async-views.yml story/quart-hypercorn.yml \
	story/nogil-gthread.yml
CONTENDER_FILES := contenders/gunicorn-gthread.yml contenders/granian-wsgi.yml \
	contenders/uvicorn-wsgi.yml contenders/flask-async-views.yml contenders/quart-hypercorn.yml \
	contenders/freethreaded-gunicorn.yml
# Compose reads .env from the first file's folder: base-images links the root's into every
# folder of compose files (offline/link-env.sh), and the image builds below also name it.
ENV_FILE = $$( [ -f .env ] && echo --env-file .env )
ARGS ?=

.PHONY: bench bench-ready bench-images demos contenders scale story remedies swarm test unit-test \
	integration-test lint venv runner-venv base-images offline-images images $(IMAGE_BUILDS) \
	swarm-nodes swarm-nodes-down lock down clean

## bench: build everything needed, run every scenario at the tutorial's load, write a report.
## From nothing, the runner's virtualenv (no test or lint tools) is made while the base images
## and then the bench's own images build; the runner then finds them built (--no-build).
bench: bench-ready
	$(PLAYGROUND) run --no-build $(ARGS)

# Two sides at once: pip's downloads and installs beside the Docker builds, which wait for
# nothing but their base images.
bench-ready:
	@$(MAKE) --no-print-directory --jobs=4 runner-venv bench-images

# The images the nine scenarios run: the Flask image with slow_api, the bonus, the load
# generator (nginx and postgres are base images), side by side in bench-ready's job slots.
BENCH_IMAGES := image-flask image-bonus image-loadgen
bench-images: base-images
	@$(MAKE) --no-print-directory $(BENCH_IMAGES)

## demos: run the companion demos (demos/) the same way; `make bench` leaves them out.
## `make demos ARGS=--published` runs only the wrk demo, at its published load (~6 minutes)
demos: runner-venv base-images
	$(PLAYGROUND) run --demos $(ARGS)

## contenders: the 2026 contenders (contenders/) at the tutorial's load; `make bench` leaves
## them out. Their sweep: `make scale ARGS=--contenders`
contenders: runner-venv base-images
	$(PLAYGROUND) run --contenders $(ARGS)

## scale: sweep concurrency up to 10,000 (long: tens of minutes); see scale/README.md
scale: runner-venv base-images
	$(PLAYGROUND) scale $(ARGS)

## story: the war story (docs/story.md): open-loop users through an incident at the third
## party, thread pools against gevent behind nginx (about 7 minutes; `ARGS="--repeat 3"` 21). The
## same incident
## under ab: `make story ARGS=--closed-loop` (about 14 minutes); goodput against offered
## load: `make story ARGS="--no-incident --sweep"` (about 13 minutes)
story: runner-venv base-images
	$(PLAYGROUND) story $(ARGS)

## remedies: the remedies table (docs/story.md): Gunicorn's thread pool as it is, gevent, and
## every remedy that fits, through the same incident (about 32 minutes; it says before it starts)
remedies: runner-venv base-images
	$(PLAYGROUND) story --remedies $(ARGS)

## swarm: the incident on a Docker Swarm stack made from the same compose files, the app
## replicated and the load from several senders merged into one run (docs/cluster.md); on a
## machine with no swarm, a single-node one is started and left afterwards; ARGS=--engines
## runs it on the three engines of swarm-nodes
swarm: runner-venv base-images
	$(PLAYGROUND) swarm $(ARGS)

## swarm-nodes: three Docker engines on this machine, each in a container built from Debian's
## packages (swarmnode/Dockerfile), joined as one manager and two workers (docs/cluster.md);
## `playground swarm --engines` runs the story on them; swarm-nodes-down removes them, with
## every image and container they held
swarm-nodes: runner-venv base-images
	docker compose $(ENV_FILE) -f compose/swarmnodes.yml build
	$(VENV)/bin/python -m playground.swarm.engines up
swarm-nodes-down: runner-venv
	$(VENV)/bin/python -m playground.swarm.engines down

## test: unit tests, then integration tests that bring every scenario up for real
# The unit tests share no port or file, so they run on every core. The integration tests share
# the machine's Docker and its two cores with the loads they measure: two lanes side by side,
# the war story's (its own projects, port and lock) and everything else one at a time
# (tests/integration/conftest.py says how they keep out of each other's way).
LANES := -n 2
test: venv base-images images
	$(PYTEST) tests/unit -n auto $(ARGS)
	$(PYTEST) tests/integration $(LANES) $(ARGS)

## unit-test: the quick loop, no Docker: the unit tests spread over every core (pytest-xdist)
unit-test: venv
	$(PYTEST) tests/unit -n auto $(ARGS)

integration-test: venv base-images images
	$(PYTEST) tests/integration $(LANES) $(ARGS)

## lint: ruff (lint and format check) over the whole repository, the apps and the load
## generator included, and mypy on src/, the apps and loadgen/openloop.py (configured in
## pyproject.toml; the generator's Rust sender is checked by its own compiler)
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	MYPYPATH=common $(VENV)/bin/mypy common slow_api offline/debian_mirror.py
	MYPYPATH=common:flask_app $(VENV)/bin/mypy flask_app/app.py
	MYPYPATH=loadgen $(VENV)/bin/mypy loadgen/openloop.py loadgen/openloop_schedule.py

## venv: the runner with the test and lint tools (make test, make lint); runner-venv: the
## runner alone, what every run needs (make bench, story, ...): no pytest, hypothesis, ruff, mypy
venv: $(VENV)/.installed
runner-venv: $(VENV)/.runner
$(VENV)/.runner: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet -e .
	touch $@
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet -e '.[test,lint]'
	touch $@ $(VENV)/.runner

## base-images: use the official images when a registry answers, else local stand-ins
base-images:
	@if [ -f .env ]; then \
		echo "base images: local stand-ins (.env; delete it to use the official images)"; \
		bash offline/link-env.sh; \
	elif docker image inspect $(PROBE_IMAGE) >/dev/null 2>&1 || \
			timeout 60 docker pull --quiet $(PROBE_IMAGE) >/dev/null 2>&1; then \
		echo "base images: official, from the registry"; \
	else \
		echo "base images: no registry answered; building local stand-ins"; \
		$(MAKE) --no-print-directory offline-images; \
	fi

## offline-images: build stand-ins for python, nginx and postgres from Debian packages
offline-images:
	bash offline/build-images.sh

## images: build the project's images (the Flask image, bonus, slow_api, load generator, demos,
## contenders, HAProxy for a remedy, the delay proxy), the eight builds side by side: BuildKit
## builds a stage they share once, and on two cores the long compile of the free-threaded
## CPython overlaps the others' downloads and installs (times in docs/testing.md). Their output
## interleaves; a failing one stops `make`.
IMAGE_BUILDS := image-flask image-bonus image-loadgen image-openloop image-demos image-contenders \
	image-freethreaded image-haproxy image-delayproxy
images: base-images
	@$(MAKE) --no-print-directory --jobs=$(words $(IMAGE_BUILDS)) $(IMAGE_BUILDS)

image-flask:
	docker compose -f sync-gunicorn.yml build
image-bonus:
	docker compose -f bonus-psycopg2-gevent.yml build
image-loadgen:
	docker compose $(ENV_FILE) -f compose/loadgen.yml build loadgen
# The story's generator: the load tools plus openloop.py and its Rust sender (the long compile).
image-openloop:
	docker compose $(ENV_FILE) -f compose/loadgen.yml build openloop
# The demos' three images (Flask + demos, legacy eventlet Gunicorn, Sanic): this file uses all.
image-demos:
	docker compose $(ENV_FILE) -f demos/wrk-workers.yml build
# The contenders' two images: normal CPython, and CPython built without the GIL (a few minutes).
image-contenders:
	docker compose $(ENV_FILE) -f contenders/gunicorn-gthread.yml build
image-freethreaded:
	docker compose $(ENV_FILE) -f contenders/freethreaded-gunicorn.yml build
# HAProxy from Debian's package, for the remedy that puts it between nginx and the app.
image-haproxy:
	docker compose $(ENV_FILE) -f story/gunicorn-threads.yml -f story/remedies/haproxy.yml build haproxy
# The delay proxy of `playground story --url` (docs/your-service.md): nginx with its Lua module.
image-delayproxy:
	docker compose $(ENV_FILE) -f delayproxy/compose.yml build

## lock: re-pin the images' Python requirements with the images' own Pythons: Python 3.13
## for all of them (offline/lock.sh), then the free-threaded contender's with the
## free-threaded CPython 3.13 its image compiles (offline/lock-freethreaded.sh, run in that
## Dockerfile's build-python stage: cached once the image is built, else a few minutes)
lock: base-images
	docker run --rm -v "$$PWD:/src" -w /src \
		$$( [ -f .env ] && . ./.env && echo $${PYTHON_BUILD_IMAGE} || echo python:3.13.9-trixie ) \
		bash offline/lock.sh
	builder=$$(docker build --quiet --target build-python -f contenders/Dockerfile.freethreaded \
		$$( [ -f .env ] && . ./.env && echo --build-arg PYTHON_BUILD_IMAGE=$${PYTHON_BUILD_IMAGE} ) \
		.) && docker run --rm -v "$$PWD:/src" -w /src "$$builder" bash offline/lock-freethreaded.sh

## down: stop every scenario of the playground, whatever state it was left in
down:
	@for f in $(SCENARIO_FILES) $(DEMO_FILES) $(STORY_FILES) $(CONTENDER_FILES); do docker compose -f $$f down --volumes --remove-orphans --timeout 5 2>/dev/null; done; true
	@# A delay proxy (docs/your-service.md) left by a `playground story --url` killed with SIGKILL.
	@for c in $$(docker ps --all --quiet --filter label=flask-playground.delay-proxy); do \
		echo "removing a delay proxy left behind: $$c"; docker rm --force $$c >/dev/null; done; true

clean: down
	rm -rf $(VENV) build *.egg-info src/*.egg-info
