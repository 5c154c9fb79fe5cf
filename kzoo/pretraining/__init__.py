"""Pretraining at scale: every objective streamed from a prepared corpus
(`kzoo.corpus`), in step-based runs that checkpoint and resume exactly."""
