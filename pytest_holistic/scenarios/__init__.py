"""Scenarios: instances, the ``@scenario`` decorator and the loaders that read them."""

from .fields import Fields
from .instance import Contrast, Instance, Reference
from .loaders import csv_file, hf, jsonl
from .scenario import LoadedScenario, Scenario, scenario

__all__ = ["Contrast", "Fields", "Instance", "LoadedScenario", "Reference", "Scenario", "csv_file", "hf", "jsonl", "scenario"]
