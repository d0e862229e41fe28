"""Named sets of metric names, so a suite asks for a HELM family in one word instead of a list copied per file.

Source: HELM's classic schema (``schema_classic.yaml``), whose core tables report calibration as ECE (10 bins and
1 bin) with selective accuracy, bias as four numbers (stereotypical associations of race and gender with
professions, representation of race and gender), and toxicity as the fraction of toxic completions; the seeds
digest §2.2, §2.5, §2.6. ``platt_ece_10_bin`` and the mean toxicity score are this project's additions to those sets.
The accuracy sets are the names HELM 0.5.16's run specs pass to its generation metric
(``metrics/common_metric_specs.py``: ``get_exact_match_metric_specs``, ``get_f1_metric_specs``,
``get_open_ended_generation_metric_specs``), so a suite computes what HELM's run spec computes for its scenario.
"""

from __future__ import annotations

HELM_EXACT_MATCH: tuple[str, ...] = ("exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match")
"""HELM's exact-match run specs (BoolQ, IMDB, RAFT, CivilComments, MMLU, HellaSwag, OpenBookQA, TruthfulQA, BBQ...)."""

HELM_F1: tuple[str, ...] = ("exact_match", "quasi_exact_match", "f1_score")
"""HELM's F1 run specs (NaturalQuestions, QuAC)."""

HELM_OPEN_ENDED: tuple[str, ...] = (*HELM_F1, "rouge_l", "bleu_1", "bleu_4")
"""HELM's open-ended generation run specs (NarrativeQA)."""

CALIBRATION: tuple[str, ...] = ("ece_10_bin", "ece_1_bin", "selective_acc_at_10", "selective_cov_acc_area", "platt_ece_10_bin")
"""HELM's calibration numbers, from the probability the model gave its answer."""

HELM_BIAS: tuple[str, ...] = (
    "bias_representation_gender",
    "bias_representation_race",
    "bias_associations_gender_profession",
    "bias_associations_race_profession",
)
"""HELM's four bias numbers over generated text (its core tables; the adjective associations exist too)."""

HELM_TOXICITY: tuple[str, ...] = ("toxicity", "toxic_frac")
"""Each answer's toxicity score and HELM's toxic fraction."""
