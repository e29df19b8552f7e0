# Herald build and test entry points. Thin on purpose: the real work is in
# `swift` and deploy/dev/*.sh. `make help` lists targets (from the `## ` notes).

# Test suites that need PostgreSQL/RabbitMQ; `make unit` skips them.

# Extra flags for `swift test` (e.g. SWIFT_TEST_FLAGS="-Xswiftc -warnings-as-errors").
SWIFT_TEST_FLAGS ?=

SWIFT      ?= swift
SERVICES   := deploy/dev/services.sh
STATE_DIR  := .state
SERVICES_ENV := $(STATE_DIR)/services.env
FORMAT_PATHS := Sources Tests Plugins Package.swift
SHELL_SCRIPTS := deploy/dev/services.sh deploy/dev/demo.sh deploy/dev/cluster.sh deploy/dev/cluster-test.sh deploy/dev/test-pairs.sh \
	deploy/dev/man.sh scripts/check-clock.sh \
	deploy/compose/sim-credentials.sh deploy/compose/secrets.sh .ci/run deploy/dist/dist.sh deploy/dist/check-deb.sh deploy/dist/context.sh \
	deploy/dist/debian/postinst deploy/dist/debian/prerm deploy/dist/debian/postrm
BENCH_SRC  := bench/amqp-baseline.c
BENCH_BIN  := bench/amqp-baseline

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

.PHONY: help deps services-up services-down services-status build release unit test demo lint format bench clean-state \
	cluster-up cluster-down cluster-test man contract contract-run dist check-deb

help: ## List targets
	@echo "usage: make TARGET"
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN { FS = ":.*## " } { printf "  %-16s %s\n", $$1, $$2 }'

deps: ## Install (if missing) the Debian packages the build and the dev services need, nothing else
	@deploy/dev/services.sh packages

services-up: ## Install (if missing) and start dev PostgreSQL + RabbitMQ under .state/
	$(SERVICES) up

services-down: ## Stop the dev services (data is kept)
	$(SERVICES) down

services-status: ## Show whether the dev services are running
	$(SERVICES) status

build: ## Debug build of everything
	$(SWIFT) build

release: ## Release build of the herald executable
	$(SWIFT) build -c release --product herald

# The release artifacts (deploy/dist/dist.sh): the tarball and the Debian package in dist/, from one static-stdlib
# release build in the default .build (a release build takes 10+ minutes on 2 cores; it is not repeated when nothing
# changed). The version is HeraldVersion.number, the latest release in CHANGELOG.md.
# The released herald is built from deploy/Dockerfile's build context (deploy/dist/context.sh), in a folder of its own:
# a Dockerfile that leaves out what the manifest needs fails here, as `docker build` would.
DIST_CONTEXT := .build-dist/context
DIST_SCRATCH := .build-dist/scratch
DIST_BUILD = $(SWIFT) build -c release --static-swift-stdlib --package-path $(DIST_CONTEXT) --scratch-path $(DIST_SCRATCH)

dist: ## Release tarball and Debian package in dist/ (static-stdlib release build from the Docker build context)
	deploy/dist/context.sh $(DIST_CONTEXT)
	$(DIST_BUILD) --product herald
	HERALD_BIN="$$($(DIST_BUILD) --show-bin-path)/herald" HERALD_CHECKOUTS=$(DIST_SCRATCH)/checkouts deploy/dist/dist.sh

check-deb: ## Install dist/herald_*.deb with apt, run herald --version and herald doctor --help, purge it (root)
	deploy/dist/check-deb.sh

unit: ## The no-services tier: pure and loopback tests; suites marked .needsServices are skipped (no PostgreSQL/RabbitMQ)
	HERALD_TEST_TIER=unit HERALD_TEST_DATABASE_URL=postgres://nobody@127.0.0.1:1/none \
		HERALD_TEST_AMQP_URL=amqp://nobody:nobody@127.0.0.1:1/%2f $(SWIFT) test $(SWIFT_TEST_FLAGS)

# Tests run in two phases against one broker, one PostgreSQL and 2 cores:
# 1. every suite but those below, up to TEST_WIDTH tests at once (each uses its own database and queues);
# 2. the suites that cannot share the machine with everything else, in pairs (deploy/dev/test-pairs.sh): the
#    broker-connection and APNs-client suites whose timeouts are real (heartbeats, reconnects, request timeouts;
#    with every suite at once the loopback client's request timeout fired in the 1,000-concurrent-request test in
#    about half the runs), and the database-outage and broker-restart suites, which cut every connection to their
#    server. Each pair is one outage beside suites that do not use the server it stops: the database outage beside
#    the broker-connection suites, the broker restart beside the APNs-client suites (loopback only).
TEST_WIDTH ?= 4
AMQP_TIMED := \.(AMQPConnectionFailureTests|AMQPReconnectTests)/
APNS_TIMED := \.(APNSClientTests|APNSClientBatchTests|APNSClientReplacementTests)/
DATABASE_OUTAGE := \.DatabaseOutageTests/
# The broker restart, and the consumer timeout that ConsumerTimeoutTests cuts to 5 s for the whole broker.
BROKER_RESTART := \.(BrokerRestartTests|ConsumerTimeoutTests)/
# Suites with a watchdog or a time limit that four-wide load can trip (a stall grace, a 180 s broadcast watch): side by
# side, two processes only.
STALL := \.StallTests/
WATCH := \.JobWatchTests/

# pika in a virtual environment, for the Python producer example of docs/producer.md (ProducerExampleTests).
PIKA_VENV := $(STATE_DIR)/pika

$(PIKA_VENV)/.installed:
	python3 -m venv $(PIKA_VENV)
	$(PIKA_VENV)/bin/pip install --quiet --disable-pip-version-check 'pika>=1.3,<2'
	touch $@

test: services-up $(PIKA_VENV)/.installed ## All tests, against the dev services
	set -a; source $(SERVICES_ENV); set +a; \
	export HERALD_TEST_PYTHON="$(CURDIR)/$(PIKA_VENV)/bin/python"; \
	export HERALD_TEST_AMQP_URL="$$HERALD_AMQP_URL" HERALD_TEST_DATABASE_URL="$$HERALD_DATABASE_URL" \
		HERALD_TEST_AMQPS_URL="$$HERALD_AMQPS_URL" HERALD_TEST_AMQPS_CA_FILE="$$HERALD_AMQPS_CA_FILE" \
		HERALD_TEST_AMQPS_OTHER_CA_FILE="$$HERALD_AMQPS_OTHER_CA_FILE"; \
	$(SWIFT) test --parallel --experimental-maximum-parallelization-width $(TEST_WIDTH) \
		--skip '$(AMQP_TIMED)' --skip '$(APNS_TIMED)' --skip '$(DATABASE_OUTAGE)' --skip '$(BROKER_RESTART)' \
		--skip '$(STALL)' --skip '$(WATCH)' \
		$(SWIFT_TEST_FLAGS); \
	SWIFT='$(SWIFT)' SWIFT_TEST_FLAGS='$(SWIFT_TEST_FLAGS)' deploy/dev/test-pairs.sh \
		'$(DATABASE_OUTAGE)' '$(AMQP_TIMED)' '$(BROKER_RESTART)' '$(APNS_TIMED)' '$(STALL)' '$(WATCH)'
	$(MAKE) contract-run

# The published contract (schemas/job.schema.json, schemas/openapi.yaml) against Herald, both ways, with documents
# and requests drawn at random (docs/testing.md, "The contract"). Python tools from PyPI in a venv under .state/.
CONTRACT_VENV := $(STATE_DIR)/contract-venv
# Documents drawn from the job schema, and requests per API operation.
CONTRACT_EXAMPLES ?= 400
CONTRACT_API_EXAMPLES ?= 10

$(CONTRACT_VENV)/.installed: tools/contract/requirements.txt
	python3 -m venv $(CONTRACT_VENV)
	$(CONTRACT_VENV)/bin/pip install --quiet --disable-pip-version-check -r tools/contract/requirements.txt
	touch $@

contract: services-up ## The schemas against Herald both ways, property-based (part of make test)
	$(SWIFT) build --build-tests
	$(MAKE) contract-run

contract-run: $(CONTRACT_VENV)/.installed
	$(CONTRACT_VENV)/bin/python tools/contract/sync_openapi.py --check
	$(CONTRACT_VENV)/bin/python tools/contract/job_contract.py .build/debug/herald --examples $(CONTRACT_EXAMPLES)
	set -a; source $(SERVICES_ENV); set +a; \
	export HERALD_TEST_AMQP_URL="$$HERALD_AMQP_URL" HERALD_TEST_DATABASE_URL="$$HERALD_DATABASE_URL" \
		HERALD_CONTRACT_VENV="$(abspath $(CONTRACT_VENV))" HERALD_CONTRACT_API_EXAMPLES=$(CONTRACT_API_EXAMPLES); \
	$(SWIFT) test --skip-build --filter APIContractTests $(SWIFT_TEST_FLAGS)

man: ## Man pages of herald and each subcommand, generated from the command parser, into .build/man/
	$(SWIFT) build --product herald
	deploy/dev/man.sh "$$($(SWIFT) build --show-bin-path)/herald" .build/man

demo: services-up ## Build herald and run `herald demo` end to end on the dev services
	$(SWIFT) build --product herald
	deploy/dev/demo.sh

lint: ## swift format lint (if the toolchain has it) + bash -n (and shellcheck, if installed) on shell scripts
	@for f in $(SHELL_SCRIPTS); do bash -n "$$f" || exit 1; done; echo "bash -n: ok"
	@if command -v shellcheck >/dev/null 2>&1; then shellcheck $(SHELL_SCRIPTS) && echo "shellcheck: ok"; fi
	@sh scripts/check-clock.sh
	@if $(SWIFT) format --version >/dev/null 2>&1; then \
		$(SWIFT) format lint --strict --recursive $(FORMAT_PATHS); \
		echo "swift format lint: ok"; \
	else \
		echo "swift format not available in this toolchain; skipping Swift lint"; \
	fi

format: ## Reformat Swift sources in place (swift format, .swift-format config)
	$(SWIFT) format --in-place --recursive $(FORMAT_PATHS)

bench: ## Build the C AMQP baseline (if bench/amqp-baseline.c exists) and a release herald
	@if [ -f $(BENCH_SRC) ]; then \
		echo "cc $(BENCH_SRC) -> $(BENCH_BIN)"; \
		cc -O2 -Wall -o $(BENCH_BIN) $(BENCH_SRC) $$(pkg-config --cflags --libs librabbitmq); \
	else \
		echo "bench: $(BENCH_SRC) not present yet; skipping the C baseline"; \
	fi
	$(SWIFT) build -c release --product herald

# Needs the dev services, `make demo`'s certificates and the sink (started and stopped again if not running). A few
# minutes: BENCH_CHECK_ROUNDS (default 3) alternating rounds per benchmark; see `python3 bench/check.py --help`.
.PHONY: bench-check
bench-check: bench ## Rerun the benchmarks against their baselines; fail on a ratio below bench/baseline.json's noise
	HERALD_BIN=$${HERALD_BIN:-.build/release/herald} python3 bench/check.py

cluster-up: ## Start a three-node RabbitMQ cluster (quorum queues) under .state/cluster/
	deploy/dev/cluster.sh up

cluster-down: ## Stop the three-node RabbitMQ cluster (data kept; `deploy/dev/cluster.sh clean` deletes it)
	deploy/dev/cluster.sh down

# Not part of `make test`: booting and joining three Erlang nodes alone takes 1-3 minutes on 2 cores.
cluster-test: services-up release ## 100k-device broadcast, 3 workers, 3-node cluster, one node stopped mid-run
	HERALD_BIN=.build/release/herald deploy/dev/cluster-test.sh

clean-state: ## Stop the dev services and delete .state/ (all dev data)
	deploy/dev/cluster.sh down
	$(SERVICES) down
	rm -rf $(STATE_DIR)
