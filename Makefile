# msk-migrate. Quick start: `make rehearse` then `make test` (both set up what is missing first).
SHELL := /bin/bash
VENV := .venv/bin
ENV ?= dev

.PHONY: setup test test-jvm test-python rehearse synth bench lint down clean bench-validation-full

setup:            ## install everything (idempotent): venv, Maven artefacts, Prometheus
	@scripts/setup.sh

test: setup test-jvm test-python   ## the whole suite (JUnit + pytest on real Kafka/Connect/Spark/Prometheus)

test-jvm:         ## JUnit 5 tests of the replication policy JAR
	mvn -q -B -f jvm/pom.xml -pl replication-policy test
	@grep -h "Tests run" jvm/replication-policy/target/surefire-reports/*.txt

test-python:
	$(VENV)/pytest

rehearse: setup   ## one-command local migration rehearsal (clusters, MM2, validation verdict)
	$(VENV)/msk-migrate rehearse

synth: setup      ## synthesize the CDKTF stacks into cdktf.out/ (no cdktf CLI needed)
	$(VENV)/python infra/main.py

bench: setup      ## benchmarks; figures go to docs/PERFORMANCE.md
	@for b in bench/*_bench.py; do echo "== $$b"; $(VENV)/python $$b || exit 1; done

lint: setup       ## hadolint on every Dockerfile
	$(VENV)/hadolint --failure-threshold style images/*/Dockerfile

down:             ## stop the local environment started by `msk-migrate local up` / rehearse
	$(VENV)/msk-migrate local down

clean: down
	rm -rf .local/env .local/test-env cdktf.out reports

bench-validation-full: setup   ## validation benchmark at 1 M, 3 M and 10 M records (long; make bench runs 1 M and 3 M)
	$(VENV)/python bench/validation_bench.py --records 1000000,3000000,10000000
