# msk-migrate. Quick start: `make rehearse` then `make test` (both set up what is missing first).
SHELL := /bin/bash
VENV := .venv/bin
# Bytecode is cached (__pycache__, ignored by git) even where the shell says not to: without it every pytest run
# and every CLI subprocess compiles the package and its tests again (pytest's assertion rewriting alone was more
# than half of the unit tier's CPU).
unexport PYTHONDONTWRITEBYTECODE
ENV ?= dev

.PHONY: setup test test-unit test-tier test-jvm test-python rehearse synth scan bench lint down clean images test-images faults sizing bench-validation-full deploy-rehearse

setup:            ## install everything (idempotent): venv, Maven artefacts, Prometheus
	@scripts/setup.sh

test: setup lint test-jvm test-python   ## the whole suite: lint gates, JUnit, pytest on real Kafka/Connect/Spark/Prometheus

test-unit: setup  ## the fast tier: no Kafka, Spark, Terraform, Maven or server (seconds)
	$(VENV)/pytest -m unit -q

# One tier at a time, e.g. `make test-tier TIER=kafka` (tiers: unit kafka spark infra prometheus aws images jvm faults).
test-tier: setup
	$(VENV)/pytest -m "$(TIER)"

test-jvm:         ## JUnit 5 tests of the replication policy JAR and the Connect extensions (auto-restart)
	mvn -q -B -f jvm/pom.xml -pl replication-policy,connect-extensions test
	@grep -h "Tests run" jvm/replication-policy/target/surefire-reports/*.txt jvm/connect-extensions/target/surefire-reports/*.txt

test-python:     ## pytest in two sessions side by side (scripts/test_python.sh; MSK_MIGRATE_TEST_SERIAL=1 for one)
	scripts/test_python.sh

# Shape: SOURCE=2.8.2 (ZooKeeper, SCRAM/TLS + ACLs) or 3.9.2 (KRaft, default); BROKERS=3 per side (or
# SOURCE_BROKERS / TARGET_BROKERS); SECURITY=plaintext|scram-tls; HEAP=384m per broker.
rehearse: setup   ## one-command local migration rehearsal (clusters, MM2, validation verdict); WORKER=image runs Connect from the built image
	$(VENV)/msk-migrate rehearse $(if $(TOPOLOGY),--topology $(TOPOLOGY)) $(if $(WORKER),--worker $(WORKER)) $(if $(SOURCE),--source-kafka $(SOURCE)) \
	  $(if $(or $(SOURCE_BROKERS),$(BROKERS)),--source-brokers $(or $(SOURCE_BROKERS),$(BROKERS))) \
	  $(if $(or $(TARGET_BROKERS),$(BROKERS)),--target-brokers $(or $(TARGET_BROKERS),$(BROKERS))) \
	  $(if $(SECURITY),--source-security $(SECURITY)) $(if $(HEAP),--broker-heap $(HEAP))

synth: setup      ## synthesize the CDKTF stacks into cdktf.out/ (no cdktf CLI needed)
	$(VENV)/python infra/main.py

scan: setup       ## the pinned checkov over freshly synthesized stacks, as a user's CI runs it (infra/scan.py)
	$(VENV)/python infra/scan.py

bench: setup      ## benchmarks; figures go to docs/PERFORMANCE.md
	@for b in bench/*_bench.py; do echo "== $$b"; $(VENV)/python $$b || exit 1; done

lint: setup       ## ruff + mypy + import layers + no import cycle + shellcheck + hadolint (the same gates as .pre-commit-config.yaml)
	$(VENV)/ruff check .
	$(VENV)/mypy
	$(VENV)/lint-imports
	$(VENV)/python scripts/check_import_cycles.py --path python --path . msk_migrate infra bench
	$(VENV)/shellcheck --severity=style $$(git ls-files '*.sh')
	$(VENV)/hadolint --failure-threshold style images/*/Dockerfile

down:             ## stop the local environment started by `msk-migrate local up` / rehearse
	$(VENV)/msk-migrate local down

clean: down
	rm -rf .local/env .local/test-env cdktf.out reports

images: setup     ## build the 3 images with buildah (stand-in bases), push to a local registry with ECR credentials, check with skopeo
	$(VENV)/python -m msk_migrate.imagebuild.localbuild

test-images: setup  ## the image tier alone (real buildah builds, registry push, the worker run from the image)
	$(VENV)/pytest tests/images -q

faults: setup     ## fault suite at full size (kill -9, SIGSTOP, task failure; 3-broker rolling restarts, leader change, network cuts (root); ALO + EOS) -> docs/RELIABILITY.md
	$(VENV)/python tests/faults/run_faults.py

sizing: setup     ## the worker sizing test at full size: a 3,000-partition flow on a worker sized by the memory model (make test runs 1,000)
	MSK_MIGRATE_SIZING_FULL=1 $(VENV)/pytest tests/integration/test_worker_sizing.py -q

bench-validation-full: setup   ## validation benchmark at 1 M, 3 M and 10 M records (long; make bench runs 1 M and 3 M)
	$(VENV)/python bench/validation_bench.py --records 1000000,3000000,10000000

deploy-rehearse: setup   ## apply, re-plan and tear down target-dev, migration-dev and migration-prod against moto (docs/runbooks/deploy.md)
	$(VENV)/python tests/infra/deploy_rehearsal.py
