"""Five real answers per intent, English and Chinese, as Slack shows them (issue 24): the message's blocks, then its
attachments (the offers or work table), rendered to text the way a reader meets them, with the characters on screen
before the first option and in total. Writes docs/slack_answers.md (figures, not tests).

    .venv/bin/python benchmarks/bench_slack_screens.py [--out docs/slack_answers.md]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUESTIONS = {
    "cheapest": (
        [
            "cheapest A100 spot",
            "cheapest H100 on-demand",
            "cheapest L4 in europe",
            "cheapest 8x H100 spot on aws",
            "cheapest A10G",
        ],
        ["最便宜的H100按需实例", "最便宜的A100竞价", "阿里云上最便宜的A10", "最便宜的L40S", "最便宜的8卡H100"],
    ),
    "price": (
        [
            "price of p4d.24xlarge",
            "g5.xlarge price",
            "price of Standard_ND96asr_v4",
            "price of a3-highgpu-8g",
            "price of p5.48xlarge spot",
        ],
        [
            "g5.xlarge 一小时多少钱",
            "p4d.24xlarge 多少钱",
            "ecs.gn7i-c8g1.2xlarge 价格",
            "p5.48xlarge 竞价多少钱",
            "a2-highgpu-1g 价格",
        ],
    ),
    "compare": (
        ["A100 vs H100", "compare L4 and A10G", "H100 vs H200 for training", "A10 vs L4", "T4 vs L4 for inference"],
        ["A100和H100哪个划算", "L4和T4对比", "H100对比H200", "A10和A10G有什么区别", "V100和A100比较"],
    ),
    "spec": (
        ["H100 specs", "how much memory does an A100 have", "L40S spec", "what is the bandwidth of H200", "B200 specs"],
        ["H100的显存多大", "A100参数", "L4规格", "H200带宽是多少", "T4显存"],
    ),
    "tco": (
        [
            "tco p4d.24xlarge 720 hours",
            "cost of 8x H100 for a month",
            "2 nodes of 8 H100 for 3 days",
            "total cost of g5.xlarge for a year",
            "tco of a100 for 100 hours with 1TB storage",
        ],
        [
            "2台8卡H100跑3天多少钱",
            "p4d.24xlarge 一个月总成本",
            "A100跑100小时要多少钱",
            "g5.xlarge 一年的总成本",
            "8卡H100一个月多少钱",
        ],
    ),
    "recommend": (
        [
            "recommend a gpu for fine-tuning a 70b model",
            "which gpu for inference of a 7b model",
            "best gpu for training a 13b model on a budget",
            "gpu for stable diffusion inference",
            "recommend gpus to serve llama 70b",
        ],
        [
            "训练千亿参数模型，预算有限",
            "推理7B模型用什么GPU",
            "微调70B模型推荐什么卡",
            "部署Llama 70B用什么GPU",
            "做Stable Diffusion推理选什么GPU",
        ],
    ),
    "pitfalls": (
        [
            "pitfalls of spot instances",
            "what to watch out for with egress",
            "pitfalls before buying H100",
            "gotchas with reserved instances",
            "pitfalls on alibaba cloud",
        ],
        ["竞价实例有什么坑", "出网流量要注意什么", "买H100前要注意什么", "预留实例有什么风险", "阿里云GPU有什么坑"],
    ),
    "work": (
        [
            "cost per million tokens for Llama 3.1 8B",
            "cost per million tokens for mistral 7b",
            "cheapest way to serve llama 8b rag on spot",
            "phi 4 long context interactive $/1M tokens",
            "llama 70b cost per million tokens",
        ],
        [
            "用Llama 3.1 8B做在线推理，每百万token成本最低的是哪家？",
            "mistral 7b 每百万token成本",
            "Llama 70B 每百万token多少钱",
            "phi 4 每百万token成本",
            "qwen 0.5b 每百万token成本",
        ],
    ),
}


OPTION = re.compile(r"^(?:1\. |:warning: |\*TCO |\*总成本)", re.M)  # a numbered option, a pitfall, a TCO option


def _block_text(block: dict) -> list[str]:
    kind = block.get("type")
    if kind in ("header", "section"):
        lines = [block["text"]["text"]] if "text" in block else []
        return lines + [f["text"] for f in block.get("fields") or []]
    if kind == "context":
        return [" ".join(e.get("text", "") for e in block["elements"])]
    if kind == "actions":
        return ["[" + "] [".join(e["text"]["text"] for e in block["elements"]) + "]"]
    if kind == "table":
        return [" | ".join(c.get("text", "") for c in row) for row in block["rows"]]
    return []


def screen(message: dict) -> tuple[str, int]:
    """What Slack shows, top to bottom (blocks, then attachments), and where the first option starts."""
    lines: list[str] = []
    first = None
    for block in [*message.get("blocks", []), *(b for a in message.get("attachments") or [] for b in a["blocks"])]:
        texts = _block_text(block)
        if first is None:
            if block.get("type") == "table" and len(block["rows"]) > 1:
                first = sum(len(x) + 1 for x in lines) + len(texts[0]) + 1  # after the table's header row
            else:
                for n, text in enumerate(texts):
                    match = OPTION.search(text)
                    if match:
                        first = sum(len(x) + 1 for x in lines) + sum(len(x) + 1 for x in texts[:n]) + match.start()
                        break
        lines += texts
    shown = "\n".join(lines)
    return shown, first if first is not None else len(shown)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "slack_answers.md"))
    args = parser.parse_args()
    from bot.pipeline import answer
    from bot.slack.blocks import answer_message
    from knowledge.kb.opener import open_kb

    kb = open_kb()
    rows, bodies = [], []
    for intent, (english, chinese) in QUESTIONS.items():
        for lang, questions in (("en", english), ("zh", chinese)):
            for question in questions:
                shown, before = screen(answer_message(answer(question, kb)))
                rows.append(f"| {intent} | {lang} | {question} | {before:,} | {len(shown):,} |")
                bodies.append(f"### {intent} ({lang}): {question}\n\n```\n{shown}\n```\n")
    head = (
        "# Slack answers as a channel sees them (issue 24)\n\n"
        "Generated by `benchmarks/bench_slack_screens.py` on the full bundled knowledge base: each message's blocks,\n"
        "then its attachments (where the offers or work table sits, right after the verdict), as text. *Before the\n"
        "first option*: characters on screen above the first table row, numbered option, pitfall or TCO option\n"
        "(a spec answer has none: the whole answer); *total*: the whole\n"
        "message (table cells joined with ` | `, buttons in brackets).\n\n"
        "| intent | lang | question | before the first option | total |\n| --- | --- | --- | ---: | ---: |\n"
    )
    Path(args.out).write_text(head + "\n".join(rows) + "\n\n" + "\n".join(bodies), encoding="utf-8")
    print(head + "\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
