"""Issue 27 phrasings -> Query: train_cost, rent_or_api, MLPerf-only models (en + zh), and what must stay as it was."""

from __future__ import annotations

import pytest

from bot.pipeline import understand


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("cost to fine-tune Llama 2 70B with LoRA", {"intent": "train_cost", "train_benchmark": "llama2_70b_lora"}),
        ("how much to pretrain Llama 3.1 8B on B200", {"intent": "train_cost", "train_benchmark": "llama31_8b"}),
        ("训练Llama 3.1 8B要花多少钱", {"intent": "train_cost", "train_benchmark": "llama31_8b", "language": "zh"}),
        ("微调 Llama 2 70B 的成本", {"intent": "train_cost", "train_benchmark": "llama2_70b_lora"}),
        ("what does it cost to train llama 3.1 405b", {"intent": "train_cost", "train_benchmark": "llama31_405b"}),
        ("MLPerf training cost for flux", {"intent": "train_cost", "train_benchmark": "flux1"}),
        ("cost to train Llama 3.1 8B on spot", {"intent": "train_cost", "pricing": "spot"}),  # the pricing asked
        ("cost to train Mistral 7B", {"intent": "train_cost", "train_benchmark": None}),  # named back, no guess
        ("cost to train Llama 3 8B", {"intent": "train_cost", "train_benchmark": None}),  # Llama 3 is not 3.1
        ("self-host Llama 3.1 8B or use an API?", {"intent": "rent_or_api", "model": "Llama-3.1-8B"}),
        ("Llama 70B: rent GPUs or pay per token?", {"intent": "rent_or_api", "model": "Llama-3.3-70B"}),
        ("自己部署还是用API", {"intent": "rent_or_api", "language": "zh", "model": None}),
        ("rent or api phi 4", {"intent": "rent_or_api", "model": "Phi-4"}),  # no serving word needed
        ("we serve 50M tokens a day of Llama 3.1 8B, rent or API?", {"intent": "rent_or_api", "tokens_per_day": 5e7}),
        ("Llama 3.1 8B 每天5000万token，自己部署还是用API", {"intent": "rent_or_api", "tokens_per_day": 5e7}),
        ("self host llama 3.1 8b or an api, 1B tokens per month", {"tokens_per_day": pytest.approx(1e9 / 30.4)}),
        ("cost per million tokens for Llama 2 70B", {"intent": "work", "mlperf_model": "llama2-70b-99", "issues": []}),
        ("cost per million tokens for DeepSeek-R1", {"intent": "work", "mlperf_model": "deepseek-r1"}),
    ],
)
def test_issue_27_phrasings(kb, text, fields):
    query = understand(text, kb)
    for key, value in fields.items():
        assert getattr(query, key) == value, (key, getattr(query, key))


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("how much does a training run of 100 hours on 8 H100 cost", "tco"),  # a duration: still a TCO question
        ("spot or on-demand for a 3 day training run", "tco"),
        ("how much to fine-tune a 7B model on 8 A100s", "price"),  # a size, no model: unchanged
        ("cost per million tokens for Llama 3.1 8B", "work"),
        ("cheapest A100 spot", "cheapest"),
        ("recommend a GPU for fine-tuning a 13B model", "recommend"),
    ],
)
def test_questions_that_stay_what_they_were(kb, text, intent):
    assert understand(text, kb).intent == intent
