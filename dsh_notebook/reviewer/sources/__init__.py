"""Transcript sources (spec: reviewer.md "Targets"; upstream-facts.md 1.3 and 4.10;
../shared/fixtures/logs/README.md). Each module reads one kind of log into numbered
utterances (:mod:`..transcript`) and lists the conversations a folder holds."""
