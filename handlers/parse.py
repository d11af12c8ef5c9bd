"""Text -> `Query`: every message is parsed once, here; handlers never see raw text.

`parse(text, vocab)` is pure. `Vocabulary.from_kb(kb)` precomputes, once per knowledge base, everything the parser
looks up: GPU, provider, region and instance-type names (from the KB), region groups (`data/region_groups.csv`)
and the keyword lexicon below. A message then goes through a few focused extractors over one masked copy of the
text; each blanks what it consumed, so later ones never read it twice (the "a100" inside an instance type, the "8"
of "8卡" or the "12" of "g5.12xlarge"):

1. ``_ids``: exact instance types and region ids, region prefixes ("europe-west"), and typos of both (fuzzy);
2. ``_numbers``: model size, top N, GPU memory, storage, egress, duration, GPU count, by regex;
3. ``_words``: ASCII words, longest n-gram first: GPU names (with memory and form factor), instance families,
   providers, region groups and every keyword of the lexicon;
4. ``_cjk``: Chinese text, longest phrase first, against the same lexicon and the KB's Chinese names;
5. ``_leftovers``: what still looks like a name goes down the resolution ladder (`knowledge.names`); what does
   not resolve becomes a `NameIssue` with candidates, never a silent guess.

The intent is then chosen by `_INTENT_RULES`, an ordered table of (intent, predicate) over the cues and fields.
"""

from __future__ import annotations

import os
import pickle
import re
import unicodedata
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from rapidfuzz import fuzz, process

from handlers import parse_budget, parse_cluster, routing
from handlers.language import has_chinese
from handlers.models import NameIssue, Query
from knowledge import names as nm

__all__ = ["LEXICON", "MAX_CHARS", "REGION_GROUPS_CSV", "Vocabulary", "parse", "zh_number"]

MAX_CHARS = 2000  # a question longer than this is read up to here (the Query keeps the whole text)
REGION_GROUPS_CSV = Path(__file__).resolve().parent.parent / "knowledge" / "data" / "region_groups.csv"

# --- lexicon: keywords per field, English | Chinese ------------------------------------------------------------
# (field, values, English phrases, Chinese phrases). Phrases are "|"-separated; an English phrase is matched as
# whole words with spaces, hyphens and dots ignored ("on-demand" = "on demand"); one written with capitals ("RI",
# "US") only matches with those capitals. A phrase may carry several values ("哪家" is a recommend cue and, with
# two providers named, a comparison). Cues vote for intents; see `_INTENT_RULES`.
LEXICON: tuple[tuple[str, str, str, str], ...] = (
    ("cue", "cheapest",
     "cheapest|lowest price|lowest prices|lowest cost|least expensive|best price|best prices|best deal|best deals",
     "最便宜|最低价|最低价格|价格最低|最实惠|最划算|最省钱|成本最低|哪家最便宜|哪里最便宜|哪个最便宜|便宜点的"),
    ("cue", "cheaper",
     "cheaper|less expensive|more expensive|pricier|cheaper than",
     "更便宜|更划算|更省钱|哪个便宜|哪家便宜|谁便宜|谁更便宜|哪个划算|哪个更划算|谁更划算|更贵|哪个贵"),
    ("cue", "compare",
     "vs|versus|compare|compared|comparing|comparison|compare prices|difference|differences|diff|side by side|"
     "head to head|stack up|stacks up",
     "对比|比较|区别|差别|差异|相比|比一比|比下|比一下|pk|有什么不同|不同之处|哪个更|对照|比呢|比起来|相比之下|"
     "比怎么样|差多少|差价|差距|差别多大"),
    ("cue", "either",
     "or|which one|which is|which|better|best between|between|faster|stronger",
     "还是|或者|或是|哪个|哪一个|哪款|谁更|更好|更适合|更强|更快|哪种|谁|比"),
    ("none", "none",
     "",
     "比如|比方|好比"),
    ("cue", "recommend either",
     "",
     "哪家|哪个好|哪个云|哪家云|哪个平台|哪家好|选哪家|用哪家|用哪个|选哪个|哪个厂商"),
    ("cue", "recommend",
     "recommend|recommendation|recommendations|suggest|suggestion|suggestions|advice|advise|which gpu|what gpu|"
     "which gpus|what gpus|which card|what card|which instance|what instance|which cloud|which provider|what should|"
     "should we|should i|best gpu|best gpus|good gpu|good gpus|best option|best choice|best setup|help me choose|"
     "help me pick|pick|choose|choosing|go with|right gpu|enough|sufficient|can i run|can we run|what do i need|"
     "what do we need|what hardware|what to rent|where to rent|what kind of gpu|which provider should",
     "推荐|建议|选哪|选什么|用什么|用哪|选择|选型|适合|合适|够用|够不够|能跑|能不能跑|跑得动|需要什么|什么卡|"
     "什么显卡|什么gpu|哪种卡|怎么选|如何选|配什么|租什么|买什么|比较好|比较合适|方案"),
    ("cue", "spec",
     "spec|specs|specification|specifications|datasheet|vram|memory bandwidth|tflops|flops|fp16|bf16|fp8|fp32|"
     "tensor cores|cuda cores|nvlink|interconnect|how much memory|how much vram|memory size|architecture|tdp|"
     "tell me about|info on|details of|details on",
     "规格|参数|性能参数|显存多大|多大显存|显存|显存带宽|内存带宽|算力|架构|功耗|介绍|详情|互联|多少显存|技术指标"),
    ("cue", "price",
     "price|prices|pricing|priced|cost|costs|costing|how much|rate|rates|hourly|per hour|an hour|per gpu hour|per hr|"
     "hr|quote|quotes|charge|charges|fee|fees|expensive|spend|usd per hour",
     "价格|价钱|多少钱|几块钱|报价|费用|收费|贵不贵|贵吗|便宜吗|一小时|每小时|单价|花多少|开销|成本|什么价|价位|"
     "要多少|租金"),
    ("cue", "tco",
     "tco|total cost|total costs|total cost of ownership|overall cost|all in cost|all in|full cost|monthly bill|"
     "monthly cost|annual cost|yearly cost|run rate|cost estimate|estimate|estimated|how much would it cost|bill|"
     "budget for|cost over|cost for running|cost of running|ballpark|rough cost|roughly",
     "总成本|总拥有成本|总费用|总花费|总价|一共多少钱|总共多少钱|总共|一共|全部费用|整体成本|综合成本|月度费用|"
     "每月费用|预估|估算|测算|算一下|账单|总体成本|预算多少|多少预算|要多少预算|大概多少钱|大概花多少"),
    ("cue", "pitfalls",
     "pitfall|pitfalls|gotcha|gotchas|trap|traps|caveat|caveats|watch out|watch out for|hidden cost|hidden costs|"
     "hidden fees|hidden charges|risk|risks|warning|warnings|lessons learned|mistakes|careful|downside|downsides|"
     "problems|surprises|things to avoid",
     "坑|踩坑|避坑|陷阱|注意事项|要注意|注意什么|需要注意|注意|风险|隐藏费用|隐藏成本|隐性成本|隐性费用|踩雷|缺点|"
     "弊端|猫腻"),
    ("cue", "checklist",
     "checklist|check list|checklists|before signing|before we sign|before buying|before we buy|before purchasing|"
     "before i buy|before committing|before we commit|what to check|what should i check|what should we check|"
     "due diligence|things to check|questions to ask|what to ask",
     "清单|检查清单|采购清单|核对清单|采购前|购买前|签约前|签合同前|下单前|需要检查|检查什么|核对|要问什么|该问什么|"
     "检查项"),
    ("cue", "digest",
     "digest|daily digest|summary|daily summary|weekly summary|news|what's new|whats new|daily report|weekly report|"
     "roundup",
     "日报|周报|简报|摘要|汇总|动态|最新动态|新闻|今日"),
    ("cue", "change",
     "what changed|changes|changed|price changes|price drop|price drops|price cuts|price increase|updates|update|"
     "drop|dropped|drops|went down|go down|gone down|went up|go up|increase|increased|cut|cuts",
     "变动|价格变动|降价|涨价|调价|有什么变化|变化|更新"),
    ("cue", "recent",
     "today|this week|this month|latest|lately|recently|these days|right now",
     "今天|今日|本周|这周|本月|最新|最近|近期"),
    ("cue", "history",
     "history|historical|trend|trends|trending|over time|over the past|past year|past month|last year|last month|"
     "chart|graph|timeline|price history|evolution",
     "历史|走势|趋势|变化趋势|历史价格|过去|曲线|涨跌|价格曲线"),
    ("cue", "help",
     "help|usage|commands|command|how to use|what can you do|what do you do|examples|menu|hi|hello|hey",
     "帮助|怎么用|如何使用|使用说明|用法|你能做什么|你会什么|命令|菜单|你好|说明|帮忙"),
    ("pricing", "spot",
     "spot|spot instance|spot instances|spot vm|spot vms|preemptible|pre emptible|preemptable|interruptible|"
     "low priority|spot pricing|spot price|spot prices",
     "竞价|竞价实例|抢占式|抢占|抢占式实例|可抢占|低优先级|竞价型|spot实例"),
    ("pricing", "on_demand",
     "on demand|ondemand|pay as you go|payg|pay per use|list price|pay as you go pricing",
     "按需|按量|按量付费|按需付费|按需实例|按小时计费|后付费|按量计费|按时计费"),
    ("pricing", "reserved",
     "reserved|reservation|reserved instance|reserved instances|RI|RIs|committed|commitment|committed use|commit|CUD|"
     "CUDs|savings plan|savings plans|reserved pricing|upfront|subscription",
     "预留|预留实例|包年包月|包年|包月|长期合约|承诺|承诺使用|预付|年付|合约|节省计划|包周期|预付费"),
    ("workload", "training",
     "train|training|trains|trained|pretrain|pretraining|pre train|pre training|distributed training",
     "训练|预训练|炼丹|训模型|训大模型"),
    ("workload", "fine_tuning",
     "fine tune|finetune|fine tuning|finetuning|fine tuned|finetuned|lora|qlora|sft|rlhf|dpo|peft|tune|tuning",
     "微调|精调|调优|指令微调|lora微调"),
    ("workload", "inference",
     "inference|infer|inferencing|serve|serving|served|deploy|deployment|deploying|online serving|real time|realtime|"
     "batch inference|predictions|llm serving|model serving",
     "推理|部署|在线服务|上线|服务化|线上推理|推理服务"),
    ("workload", "hpc",
     "hpc|high performance computing|scientific computing|simulation|simulations|cfd|molecular dynamics|fp64|"
     "double precision|gromacs|weather|physics",
     "科学计算|高性能计算|仿真|模拟|双精度|分子动力学|气象|计算流体"),
    ("workload", "rendering",
     "render|rendering|renders|blender|3d|vfx|render farm|cloud gaming|vdi|virtual desktop|transcoding|video encoding",
     "渲染|渲染农场|图形|云游戏|云桌面|视频转码|转码|三维|动画"),
    ("priority", "cost",
     "cheap|cheaply|budget|on a budget|tight budget|limited budget|low cost|cost effective|cost efficient|affordable|"
     "save money|saving money|price performance|bang for the buck|bang for buck|economical|frugal|inexpensive|"
     "cheaper|less expensive",
     "预算|预算有限|预算紧|预算不多|性价比|便宜|省钱|低成本|成本低|划算|实惠|经济|更便宜|比较便宜|比较划算|不差钱"),
    ("priority", "performance",
     "fast|fastest|faster|speed|low latency|latency|high throughput|throughput|performance|high performance|"
     "best performance|max performance|quick|quickly|powerful|most powerful|top performance|sla",
     "性能|高性能|速度|最快|更快|快速|低延迟|延迟|吞吐|算力强|最强|性能最好|高吞吐|比较快|性能优先"),
    ("priority", "ecosystem",
     "ecosystem|kubernetes|k8s|managed|managed service|eks|gke|aks|integration|integrations|tooling|mlops|sagemaker|"
     "vertex|vertex ai",
     "生态|托管|容器服务|集成|工具链|社区|运维"),
    ("priority", "compliance",
     "compliance|compliant|gdpr|hipaa|soc 2|soc2|iso 27001|data residency|data sovereignty|sovereignty|regulated|"
     "regulation|regulatory|audit|fedramp|mlps",
     "合规|等保|等保三级|等保2.0|数据本地化|数据出境|数据主权|监管|审计|信创|国产化|安全合规|备案"),
    ("currency", "CNY",
     "cny|rmb|yuan|in cny|in rmb|renminbi",
     "人民币|元|块钱|¥|rmb"),
    ("currency", "USD",
     "usd|in usd|dollar|dollars|us dollars|bucks",
     "美元|美金|美刀"),
    ("topic", "spot",
     "spot|spot instance|spot instances|preemptible|interruptible",
     "竞价|竞价实例|抢占式|抢占"),
    ("topic", "interruption",
     "interruption|interruptions|interrupted|reclaim|reclaimed|eviction|evicted|preemption",
     "中断|回收|驱逐|被抢占"),
    ("topic", "egress",
     "egress|outbound|data transfer|traffic|bandwidth cost|bandwidth costs|network cost",
     "出网|出网流量|公网流量|流量|带宽费|外网流量|流量费"),
    ("topic", "storage",
     "storage|disk|disks|ebs|ssd|nvme|volume|volumes",
     "存储|云盘|磁盘|硬盘|数据盘"),
    ("topic", "network",
     "network|networking|infiniband|rdma|efa|roce",
     "网络|组网|rdma网络"),
    ("topic", "interconnect",
     "nvlink|nvswitch|interconnect",
     "互联|多卡互联"),
    ("topic", "vgpu",
     "vgpu|fractional gpu|gpu slice|gpu slices|shared gpu",
     "虚拟化|vgpu|分片|共享gpu"),
    ("topic", "mig",
     "mig|multi instance gpu",
     "mig切分"),
    ("topic", "kubernetes",
     "kubernetes|k8s|eks|gke|aks|container|containers",
     "容器|容器服务"),
    ("topic", "driver",
     "driver|drivers",
     "驱动"),
    ("topic", "cuda",
     "cuda|cudnn",
     "cuda版本"),
    ("topic", "checkpoint",
     "checkpoint|checkpoints|checkpointing",
     "断点|检查点|断点续训"),
    ("topic", "reserved",
     "reserved|reserved instance|reserved instances|commitment|RI|savings plan",
     "预留|预留实例|包年包月"),
    ("topic", "lock_in",
     "lock in|vendor lock in|lockin",
     "锁定|厂商锁定|绑定"),
    ("topic", "compliance",
     "compliance|gdpr|hipaa",
     "合规|等保"),
    ("topic", "data_residency",
     "data residency|data sovereignty",
     "数据本地化|数据出境"),
    ("topic", "quota",
     "quota|quotas|limits|limit increase",
     "配额|限额"),
    ("topic", "availability",
     "availability|capacity|stock|sold out|out of stock|in stock",
     "库存|缺货|没货|售罄|可用性|抢不到|买不到"),
    ("topic", "billing",
     "billing|invoice|invoices|metering",
     "计费|账单|扣费|计费方式"),
    ("topic", "hidden_costs",
     "hidden cost|hidden costs|hidden fees|hidden charges",
     "隐藏费用|隐藏成本|隐性成本|隐性费用"),
    ("topic", "memory",
     "vram|gpu memory|oom|out of memory",
     "显存|爆显存"),
    ("topic", "procurement",
     "procurement|purchasing|contract|contracts",
     "采购|合同|签约"),
    ("topic", "benchmark",
     "benchmark|benchmarks",
     "跑分|基准测试|评测"),
)  # fmt: skip

# Words that are never a name, even though they look like one (digits next to letters).
_NOT_NAMES = frozenset(
    [
        "gpt2",
        "gpt3",
        "gpt4",
        "gpt4o",
        "gpt5",
        "o1",
        "o3",
        "llama2",
        "llama3",
        "llama4",
        "qwen2",
        "qwen3",
        "qwen25",
        "sd3",
        "sd15",
        "sdxl",
        "t5",
        "bf16",
        "fp16",
        "fp8",
        "fp32",
        "fp64",
        "int8",
        "int4",
        "k8s",
        "p99",
        "p95",
        "p90",
        "p50",
        "h2o",
        "web3",
        "ipv4",
        "ipv6",
        "s3",
        "ec2",
        "mp3",
        "mp4",
        "h264",
        "h265",
        "4k",
        "8k",
        "1080p",
        "720p",
        "x86",
        "x64",
        "arm64",
        "amd64",
        "v1",
        "v2",
        "v3",
        "v4",
        "v5",
        "v6",
        "q1",
        "q2",
        "q3",
        "q4",
        "gen2",
        "gen3",
        "gen4",
        "gen5",
        "pcie3",
        "pcie4",
        "pcie5",
        "l1",
        "l2",
        "l3",
        "mi6",
        "r1",
        "v3",
        "2fa",
        "c4",
        "c5",
        "m5",
        "m6",
        "m7",
        "r5",
        "r6",
        "deepseek",
        "glm4",
        "yi34b",
        "phi3",
        "phi4",
        "mixtral",
        "sd2",
        "nvme1",
        "gpt35",
        "w8a8",
        "a2a",
        "24x7",
    ]  # noqa: E501
)
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "on",
        "in",
        "at",
        "to",
        "with",
        "and",
        "or",
        "is",
        "are",
        "be",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "how",
        "i",
        "we",
        "you",
        "me",
        "my",
        "our",
        "us",
        "your",
        "please",
        "pls",
        "can",
        "could",
        "would",
        "should",
        "do",
        "does",
        "did",
        "any",
        "some",
        "about",
        "from",
        "by",
        "as",
        "per",
        "vs",
        "me",
        "give",
        "show",
        "tell",
        "need",
        "want",
        "get",
        "have",
        "has",
        "there",
        "here",
        "right",
        "now",
        "just",
        "also",
        "more",
        "most",
        "than",
        "then",
        "so",
        "if",
        "cloud",
        "clouds",
        "provider",
        "providers",
        "vendor",
        "vendors",
        "instance",
        "instances",
        "server",
        "servers",
        "machine",
        "machines",
        "node",
        "nodes",
        "cluster",
        "clusters",
        "model",
        "models",
        "region",
        "regions",
        "zone",
        "zones",
        "offer",
        "offers",
        "option",
        "options",
        "hour",
        "hours",
        "day",
        "days",
        "week",
        "weeks",
        "month",
        "months",
        "year",
        "years",
        "today",
        "gpu",
        "gpus",
        "card",
        "cards",
        "thanks",
        "thank",
        "hey",
        "team",
        "folks",
        "guys",
    ]  # noqa: E501
)
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "single": 1, "two": 2, "dual": 2, "pair": 2, "three": 3, "four": 4, "quad": 4,
    "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "sixteen": 16,
    "half": 0.5, "half a": 0.5,
}  # fmt: skip
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9, "单": 1, "双": 2, "半": 0.5}  # fmt: skip
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_ZH_NUM = "[零〇一二两俩三四五六七八九十百千万单双半]+"
_HOURS = {"hour": 1, "day": 24, "week": 168, "month": 730, "year": 8760}
_MENTION = re.compile(r"^\s*(?:<@[^>]+>|@[\w.\-]+|/gpu\b|/gpubot\b)[\s,:，：]*", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
_BIG = re.compile(r"[a-z0-9][a-z0-9._\-]*[a-z0-9]|[a-z0-9]")
_MEMORY_TOKEN = re.compile(r"^(\d+(?:\.\d+)?)(gb|g|gib)?$")
_UNIT_TOKEN = re.compile(
    r"^\d+(?:\.\d+)?(?:b|m|k|t|g|gb|tb|mb|pb|gib|tib|h|hr|hrs|d|w|y|yr|yrs|x|ms|s|nm|kw|gbps|mbps|tflops|"
    r"st|nd|rd|th|min|mins|mo|p|fps|qps|tps|usd|cny|rmb|k)$"
)
_GPU_SHAPE = re.compile(r"^[a-z]{1,4}\d{2,5}[a-z]{0,3}$")  # "h1000", "z900", "rtx5090": a model number
_PROVIDER_CUTOFF = 80  # a plain word is read as a provider from this score: "azrue" (80), "huwaei" (83)
_JOIN_GAP = frozenset(" -_./'’")


def zh_number(text: str) -> float | None:
    """Arabic or Chinese numerals -> a number ("16" -> 16, "十六" -> 16, "两" -> 2, "半" -> 0.5)."""
    try:
        return float(text)
    except ValueError:
        pass
    total, current = 0.0, 0.0
    for ch in text:
        if ch in _ZH_DIGITS:
            current = _ZH_DIGITS[ch]
        elif ch in _ZH_UNITS:
            total += (current or 1) * _ZH_UNITS[ch]
            current = 0
        else:
            return None
    return total + current


def _number(text: str) -> float | None:
    return _NUMBER_WORDS.get(text) if text in _NUMBER_WORDS else zh_number(text.replace(" ", ""))


def _is_cjk(text: str) -> bool:
    return has_chinese(text)


_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def _compact(text: str) -> str:
    """Lower-cased letters and digits only, ``o`` beside digits read as ``0`` ("A-100" -> "a100")."""
    return nm.repair(_NOT_ALNUM.sub("", text.lower()))


# --- vocabulary -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hit:
    """One meaning of a phrase: `field` gets `value`. `case` is the exact capitalisation required, if any."""

    field: str
    value: Any
    case: str | None = None


@dataclass
class Vocabulary:
    """Everything `parse` looks up, precomputed from one knowledge base (build once, reuse for every message)."""

    gpu_names: Mapping[str, str]
    provider_names: Mapping[str, str]
    regions: dict[str, str]  # lower-cased id -> id
    instance_types: dict[str, str]  # lower-cased type (also without "standard_"/"ecs.") -> type
    region_groups: dict[str, tuple[str, ...]]  # group -> region ids
    gpu_memories: dict[str, frozenset[float]] = field(default_factory=dict)  # family -> memory sizes (GB)
    words: dict[str, list[Hit]] = field(default_factory=dict)  # compact ASCII phrase -> hits
    cjk: dict[str, list[Hit]] = field(default_factory=dict)  # Chinese phrase -> hits
    cjk_lengths: tuple[int, ...] = ()
    region_prefixes: frozenset[str] = frozenset()
    region_words: tuple[str, ...] = ()  # second parts of region ids ("east", "hangzhou")
    family_words: frozenset[str] = frozenset()  # first words of multi-word GPU names ("tpu", "rtx")
    gpu_index: nm.NameIndex | None = None
    gpu_word_index: nm.NameIndex | None = None  # GPU names without digits ("hopper", "trainium"), for plain words
    provider_index: nm.NameIndex | None = None
    region_index: nm.NameIndex | None = None
    instance_index: nm.NameIndex | None = None
    forms: dict[str, dict[str, set[float]]] = field(default_factory=dict)

    _cache: ClassVar[weakref.WeakKeyDictionary] = weakref.WeakKeyDictionary()

    @classmethod
    def from_kb(cls, kb: Any) -> Vocabulary:
        """The vocabulary of `kb`, built on first use and cached for as long as `kb` lives."""
        kb = kb.current() if hasattr(kb, "current") else kb  # a live knowledge base: key on the current one
        vocab = cls._cache.get(kb) or cls._from_disk(kb)
        if vocab is None:
            memories: dict[str, set[float]] = {}
            for row in kb.rows(  # through kb.rows: a damaged file is reported as such
                "SELECT DISTINCT gpu, gpu_memory_gb FROM offers WHERE gpu_memory_gb IS NOT NULL AND NOT vgpu"
            ):
                memories.setdefault(row["gpu"], set()).add(float(row["gpu_memory_gb"]))
            vocab = cls.build(
                gpu_names=kb.gpu_names,
                provider_names=kb.provider_names,
                regions=kb.regions,
                instance_types=kb.instance_types.values(),
                gpu_memories=memories,
            )
            cls._to_disk(kb, vocab)
        cls._cache[kb] = vocab
        return vocab

    @staticmethod
    def _disk_path(kb: Any) -> Path | None:
        """Where a built vocabulary is kept beside its knowledge base (keyed by when that was built)."""
        built = getattr(kb, "meta", lambda _key: None)("built_at")
        path = getattr(kb, "path", None)
        if not built or path is None:
            return None
        stamp = re.sub(r"[^0-9A-Za-z]", "", built)
        return Path(path).with_name(f"{Path(path).stem}.vocab-{stamp}-{Path(path).stat().st_ino}.pickle")

    @classmethod
    def _from_disk(cls, kb: Any) -> Vocabulary | None:
        """A vocabulary pickled by an earlier process for this very knowledge base (the CLI's fast path)."""
        try:
            path = cls._disk_path(kb)
            if path is None or not path.exists():
                return None
            with path.open("rb") as handle:
                vocab = pickle.load(handle)
            return vocab if isinstance(vocab, cls) else None
        except Exception:  # a stale or unreadable cache is rebuilt, never trusted
            return None

    @classmethod
    def _to_disk(cls, kb: Any, vocab: Vocabulary) -> None:
        try:
            path = cls._disk_path(kb)
            if path is None:
                return
            for old in path.parent.glob(f"{Path(kb.path).stem}.vocab-*.pickle"):
                old.unlink(missing_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            with tmp.open("wb") as handle:
                pickle.dump(vocab, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except Exception:  # caching is an optimisation: never fail a question for it
            return

    @classmethod
    def build(
        cls,
        *,
        gpu_names: Mapping[str, str],
        provider_names: Mapping[str, str],
        regions: Iterable[str],
        instance_types: Iterable[str],
        gpu_memories: Mapping[str, Iterable[float]] | None = None,
        region_groups_csv: Path = REGION_GROUPS_CSV,
    ) -> Vocabulary:
        """Build from plain names (what `from_kb` reads from a KB; tests may pass small ones)."""
        region_ids = {r.lower(): r for r in regions if r and r != "article"}
        types: dict[str, str] = {}
        for t in instance_types:
            low = t.lower()
            for key in (low, low.removeprefix("standard_"), low.removeprefix("ecs.")):
                types.setdefault(key, t)
        memories = {family: set(sizes) for family, sizes in (gpu_memories or {}).items()}
        for alias, family in gpu_names.items():
            size = nm.split_gpu_variant(alias).memory_gb
            if size:
                memories.setdefault(family, set()).add(size)
        groups, group_aliases = _load_region_groups(region_groups_csv, region_ids.values())
        vocab = cls(
            gpu_names=gpu_names,
            provider_names=provider_names,
            regions=region_ids,
            instance_types=types,
            region_groups=groups,
            gpu_memories={family: frozenset(sizes) for family, sizes in memories.items()},
            region_prefixes=frozenset(r.split("-")[0] for r in region_ids if "-" in r),
            region_words=tuple(sorted({r.split("-")[1] for r in region_ids if "-" in r})),
            gpu_index=nm.name_index(gpu_names, kind="gpu"),
            gpu_word_index=nm.NameIndex(
                "gpu", {a: t for a, t in gpu_names.items() if len(a) >= 4 and not re.search(r"[\d*/]", a)}
            ),
            provider_index=nm.name_index(provider_names, kind="provider"),
            region_index=nm.name_index({r: r for r in region_ids.values()}, kind="region"),
            instance_index=nm.name_index(types, kind="instance_type"),
        )
        vocab.forms = vocab.gpu_index.forms
        vocab._fill_lexicon(group_aliases, types.values())
        return vocab

    def _add(self, phrase: str, hit: Hit) -> None:
        if not phrase.isascii():  # Chinese (or "¥"): matched as a substring by `_cjk`
            hits = self.cjk.setdefault(phrase.lower(), [])
        else:
            key = _compact(phrase)
            if not key:
                return
            if any(c.isupper() for c in phrase):  # written with capitals: matches only as written ("RI", "US")
                hit = Hit(hit.field, hit.value, re.sub(r"[^A-Za-z0-9]", "", phrase))
            hits = self.words.setdefault(key, [])
        if hit not in hits:
            hits.append(hit)

    def _fill_lexicon(self, group_aliases: Mapping[str, str], types: Iterable[str]) -> None:
        family_words: set[str] = set()
        plurals: list[tuple[str, Hit]] = []
        for alias, family in self.gpu_names.items():  # GPU names first: they win over everything else
            if len(nm.compact(alias)) < 2 or any(c in alias for c in "*/"):
                continue
            variant = nm.split_gpu_variant(alias)
            hit = Hit("gpu", (family, nm.variant_memory(variant, self.forms.get(family, {}))))  # "H100-NVL": 94
            self._add(alias, hit)
            key = _compact(alias)
            stripped = nm.compact(alias)
            if stripped and stripped not in self.words:
                self.words[stripped] = [hit]
            if key and key[-1].isdigit():
                plurals.append((key + "s", hit))  # "H100s", added once every real name is in
            if " " in alias.strip():
                family_words.add(alias.split()[0].lower())
        for key, hit in plurals:
            self.words.setdefault(key, [hit])
        self.family_words = frozenset(w for w in family_words if len(w) >= 3 and w not in nm.VENDOR_WORDS)
        for alias, pid in self.provider_names.items():
            for phrase in {alias, re.sub(r"\s*\(.*?\)\s*", " ", alias).strip(), *re.findall(r"\((.*?)\)", alias)}:
                if phrase:
                    self._add(phrase, Hit("provider", pid))
        for alias, group in group_aliases.items():
            self._add(alias, Hit("group", group))
        for family, members in _instance_families(types).items():
            if family not in self.words:
                self.words[family] = [Hit("family", members)]
        for fieldname, values, english, chinese in LEXICON:
            for value in values.split():
                for phrase in filter(None, f"{english}|{chinese}".split("|")):
                    self._add(phrase, Hit(fieldname, value))
        self.cjk_lengths = tuple(sorted({len(k) for k in self.cjk}, reverse=True))


def _load_region_groups(path: Path, regions: Iterable[str]) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """group -> KB region ids its patterns match, and alias -> group (`knowledge.regions`)."""
    from knowledge.regions import load_groups

    return load_groups(regions, path)


def _instance_families(types: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """compact family name -> the instance types of that family.

    A family is any leading part of a type cut at "." "-" or "_" ("p4d" of "p4d.24xlarge", "gn7i" of
    "ecs.gn7i-c8g1.2xlarge", "a2-highgpu" of "a2-highgpu-8g"), and for Azure the series without sizes ("NC A100 v4"
    and "NCads A100 v4" of "Standard_NC24ads_A100_v4"). A family must contain a digit and a letter.
    """
    families: dict[str, list[str]] = {}
    for t in sorted(set(types)):
        if " " in t:
            continue
        low = t.lower()
        body = low.removeprefix("standard_").removeprefix("ecs.")
        keys = {_compact(body[: m.start()]) for m in re.finditer(r"[._\-]", body)}
        if low.startswith("standard_"):
            head, *tail = [p for p in body.split("_") if p != "promo"]
            tail_key = "".join(tail)
            letters = re.match(r"[a-z]+", head)
            if letters:
                keys.add(letters.group() + tail_key)
                keys.add(re.sub(r"\d", "", head) + tail_key)
        for key in keys:
            if key and re.search(r"\d", key) and re.search(r"[a-z]", key) and key != _compact(body):
                families.setdefault(key, []).append(t)
    return {key: tuple(members) for key, members in families.items()}


# --- state ------------------------------------------------------------------------------------------------------


@dataclass
class _State:
    """One message being parsed: the text, its masked lower-case copy, and what was found so far."""

    text: str
    low: str
    gpus: list[str] = field(default_factory=list)
    gpu_count: float | None = None
    min_gpu_memory_gb: float | None = None
    pricings: list[str] = field(default_factory=list)
    providers: list[str] = field(default_factory=list)
    regions: list[str] = field(default_factory=list)
    instance_types: list[str] = field(default_factory=list)
    mentions: dict[str, int] = field(default_factory=dict)  # field -> how many separate names were given
    workload: str | None = None
    model_size_b: float | None = None
    priority: str | None = None
    durations: list[float] = field(default_factory=list)
    storage_gb: float | None = None
    egress_gb: float | None = None
    currency: str | None = None
    top_n: int | None = None
    cues: dict[str, int] = field(default_factory=dict)  # cue -> position of its first mention
    cue_ends: list[tuple[int, str]] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    issues: list[NameIssue] = field(default_factory=list)
    used_tokens: set[int] = field(default_factory=set)
    positions: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    memory_at: int | None = None  # where a "80GB memory" that may belong to the GPU before it starts
    gpu_variants: list[str] = field(default_factory=list)

    def take(self, start: int, end: int) -> None:
        self.low = self.low[:start] + " " * (end - start) + self.low[end:]

    def add(self, listname: str, values: Iterable[str], pos: int) -> None:
        """Add names found at `pos`; `ordered` later puts every list in the order the text names them."""
        target = getattr(self, listname)
        self.mentions[listname] = self.mentions.get(listname, 0) + 1
        for value in values:
            if value not in target:
                target.append(value)
                self.positions[listname, value] = (pos, len(target))

    def ordered(self, listname: str) -> list[str]:
        return sorted(getattr(self, listname), key=lambda value: self.positions.get((listname, value), (0, 0)))

    def apply(self, hit: Hit, start: int, end: int, vocab: Vocabulary) -> None:
        """Record what one lexicon hit means."""
        f, v = hit.field, hit.value
        if f == "gpu":
            self.add("gpus", [nm.gpu_label(*v)], start)
            variant = nm.variant_name(v[0], v[1], self.text[start:end])  # "H100 PCIe": a variant question narrows
            if variant and variant not in self.gpu_variants:
                self.gpu_variants.append(variant)
        elif f == "provider":
            self.add("providers", [v], start)
        elif f == "group":
            self.add("regions", vocab.region_groups.get(v, ()), start)
        elif f == "family":
            self.add("instance_types", v, start)
        elif f == "cue":
            self.cues.setdefault(v, start)
            self.cue_ends.append((end, v))
        elif f == "pricing":
            self.pricings.append(v)
        elif f == "topic":
            if v not in self.topics:
                self.topics.append(v)
        elif f == "none":  # a phrase that only stops a shorter one from matching ("比如" is not "比")
            pass
        elif getattr(self, f) is None:  # workload, priority, currency: the first mention wins
            setattr(self, f, v)


# --- extractors -------------------------------------------------------------------------------------------------


def _ids(st: _State, vocab: Vocabulary) -> None:
    """Exact instance types and region ids; region prefixes; typos of either go down the ladder."""
    for m in _BIG.finditer(st.low):
        token = m.group()
        if token in vocab.instance_types:
            st.add("instance_types", [vocab.instance_types[token]], m.start())
        elif len(token) <= 2 and token.isalpha():
            continue  # a country code used as a region id ("US", "CA", "IS") is a region group, never "us"/"in"
        elif token in vocab.regions:
            st.add("regions", [vocab.regions[token]], m.start())
        elif token[:-1] in vocab.regions and token[-2].isdigit():  # a zone ("us-east-1a") is in its region
            st.add("regions", [vocab.regions[token[:-1]]], m.start())
        elif token.isalnum() or _compact(token) in vocab.words:
            continue
        elif _looks_like_region(token, vocab):
            prefixed = [r for low, r in vocab.regions.items() if low.startswith(token + "-") or
                        (low.startswith(token) and low[len(token):].isdigit())]  # fmt: skip
            if prefixed:
                st.add("regions", sorted(prefixed), m.start())
            else:
                _ladder(st, token, vocab.region_index, "region", "regions", m.start())
        elif _looks_like_instance(token, vocab):
            _ladder(st, token, vocab.instance_index, "instance_type", "instance_types", m.start())
        else:
            continue
        st.take(m.start(), m.end())


def _looks_like_region(token: str, vocab: Vocabulary) -> bool:
    """ "us-est-1", "cn-hangzou", "europe-west": a known first part, then a digit or a known-looking second part."""
    parts = token.split("-")
    if len(parts) < 2 or parts[0] not in vocab.region_prefixes or not parts[1]:
        return False
    if any(c.isdigit() for c in token):
        return True
    return process.extractOne(parts[1], vocab.region_words, scorer=fuzz.ratio, score_cutoff=80) is not None


def _is_family(word: str, vocab: Vocabulary) -> bool:
    return any(hit.field == "family" for hit in vocab.words.get(_compact(word), ()))


def _looks_like_instance(token: str, vocab: Vocabulary) -> bool:
    """ "p4d.12xlarge", "standard_nc24ads_a100_v4", "a2-highgpu-3g": shaped like an instance type."""
    if token.startswith(("standard_", "ecs.")) or "xlarge" in token or re.search(r"_v\d+$", token):
        return True
    head = re.split(r"[.\-]", token)[0]
    if "." in token and (_is_family(head, vocab) or re.search(r"large|metal", token.rsplit(".", 1)[-1])):
        return True
    return "-" in token and _is_family(head, vocab) and any(c.isdigit() for c in token)


def _ladder(st: _State, raw: str, index: nm.NameIndex | None, kind: str, listname: str, pos: int) -> None:
    if index is None:
        return
    found = index.resolve(raw)
    if isinstance(found, nm.Resolved):
        st.add(listname, [found.name], pos)
    elif isinstance(found, nm.Ambiguous):
        st.issues.append(NameIssue(kind=kind, text=raw, status="ambiguous", candidates=list(found.candidates)))
    else:
        st.issues.append(NameIssue(kind=kind, text=raw, status="unknown", candidates=list(found.suggestions)))


def _per_unit(unit: str) -> float:
    unit = unit.strip().lower()
    return {"t": 1000, "tb": 1000, "tib": 1024, "p": 1e6, "pb": 1e6, "g": 1, "gb": 1, "gib": 1}.get(unit, 1)


def _duration(m: re.Match) -> float | None:
    n = _number(m["n"].strip())
    unit = m["unit"]
    if n is None or n <= 0:
        return None
    hours = _HOURS[_unit_kind(unit)]
    if hours == 1 and n == 1:
        return None  # "per hour", "一小时": the unit of a price, not a duration
    if hours == 8760 and n > 10:
        return None  # "2024年" is a date
    return n * hours


def _unit_kind(unit: str) -> str:
    unit = unit.strip()
    if unit in {"小时", "钟头"} or unit.startswith("h"):
        return "hour"
    if unit in {"天", "日"} or unit.startswith("d"):
        return "day"
    if unit in {"周", "星期", "个星期", "个礼拜", "礼拜"} or unit.startswith("w"):
        return "week"
    if unit in {"个月", "月"} or unit.startswith("mo"):
        return "month"
    return "year"


_UNIT = r"(?:gb|g|gib)(?![a-z0-9])"
_BIG_UNIT = r"(?P<unit>tb|t|gb|g|pb|tib|gib)(?![a-z0-9])"
_N = r"(?P<n>\d+(?:\.\d+)?)"
_AFTER_ID = r"(?<![a-z0-9.])"  # a number that does not continue a name or another number
_MEM_WORD = r"(?:vram|gpu memory|gpu ram|memory|mem|显存)(?![a-z])(?!\s*(?:bandwidth|带宽))"
_MORE = (
    r"(?:at least|min(?:imum)?|>=|≥|>|more than|over|above|no less than|greater than|"
    r"大于等于|大于|超过|至少|不少于|不低于|不小于|最少|高于|起码)"
)
_PLUS = r"(?:\+|or more|or above|plus|以上|及以上|或以上|起)"
_STORE = r"(?:storage|disk|disks|ssd|nvme|block storage|volume|存储|硬盘|磁盘|云盘|数据盘|存储空间)"
_EGRESS = (
    r"(?:egress|outbound traffic|outbound|data transfer out|data transfer|internet traffic|traffic|"
    r"出网流量|出网|公网流量|外网流量|出流量|下行流量|流量)"
)
_PER_MONTH = r"(?:/\s*(?:mo|month|月)|per month|a month|每月)"
_UNITS = r"(?P<unit>hours?|hrs?|h|小时|钟头|days?|天|weeks?|wks?|周|个?星期|个?礼拜|months?|mos?|个月|years?|yrs?|y|年)"
_NOT_TIMES = r"(?!\s*(?:faster|slower|cheaper|more|less|better|as|the|speed|perf|performance|price|cost|times|x?large))"
_ZH_SMALL = "[一二两三四五六七八九十]+"

_STORE_ANCHORS = ("stor", "disk", "ssd", "nvme", "volume", "存储", "硬盘", "磁盘", "云盘", "数据盘")
_EGRESS_ANCHORS = ("egress", "outbound", "transfer", "traffic", "流量", "出网")
_MEM_ANCHORS = ("vram", "mem", "显存")
_MORE_ANCHORS = ("least", "min", ">", "≥", "more", "over", "above", "less", "greater", "大于", "超过", "至少",
                 "不少于", "不低于", "不小于", "最少", "高于", "起码")  # fmt: skip
_PLUS_ANCHORS = ("+", "or more", "or above", "plus", "以上", "起")
_TIMES_ANCHORS = ("x", "×", "*")

# (field, anchors, pattern): a pattern runs only if the text contains one of its anchors (None: always), in this
# order (model sizes before counts, so "8x7b" is a model). Each match sets the field (see `_numeric_value`); the
# group "span", when a pattern has one, is all that the match consumes.
_NUMERIC: tuple[tuple[str, tuple[str, ...] | None, re.Pattern[str]], ...] = tuple(
    (name, anchors, re.compile(pattern))
    for name, anchors, pattern in (
        ("model_moe", ("x",), rf"{_AFTER_ID}(?P<a>\d+)\s*x\s*{_N}\s*b(?![a-z0-9])"),
        ("model_size", ("b",),
         rf"{_AFTER_ID}{_N}\s?(?:b|bn|billion)(?![a-z0-9])(?:\s*(?:params|param|parameters?|参数|模型))?"),
        ("model_t", ("param", "参数", "trillion"),
         rf"{_AFTER_ID}{_N}\s?(?:t|trillion)\s*(?:params|param|parameters|参数)"),
        ("model_zh", ("亿",),
         rf"(?P<n>\d+(?:\.\d+)?|{_ZH_SMALL})?\s*(?P<unit>百亿|千亿|万亿|亿)(?:级|规模|级别)?(?:的)?"
         r"(?:参数量|参数|大模型|模型|params)"),
        ("top_n", ("top", "best", "first", "前"),
         rf"(?:\btop|\bbest|\bfirst|前)\s*(?P<span>(?P<n>\d{{1,3}}|{_ZH_SMALL}))(?:\s*(?:名|个|家|款|种))?(?![\d.x×])"),
        ("top_n", ("cheapest", "least", "lowest", "option", "offer", "choice", "result", "pick"),
         rf"{_AFTER_ID}(?P<span>(?P<n>\d{{1,3}}))\s+"
         r"(?:cheapest|least expensive|lowest|options|offers|choices|results|picks)"),
        ("top_n", ("最便宜",),
         rf"最便宜的?\s*(?P<span>(?P<n>\d{{1,3}}|{_ZH_SMALL})\s*(?:个|家|款|种))(?!\s*(?:gpu|卡|显卡|张|[a-z]+\d))"),
        ("storage_gb", _STORE_ANCHORS,
         rf"{_N}\s*{_BIG_UNIT}\s*(?:of\s+)?(?:ssd\s+|nvme\s+|local\s+|persistent\s+)?{_STORE}"),
        ("storage_gb", _STORE_ANCHORS, rf"{_STORE}\s*(?:of|:|：|需要|要|约|大概)?\s*{_N}\s*{_BIG_UNIT}"),
        ("egress_gb", _EGRESS_ANCHORS, rf"{_N}\s*{_BIG_UNIT}\s*{_PER_MONTH}?\s*(?:of\s+)?{_EGRESS}"),
        ("egress_gb", _EGRESS_ANCHORS,
         rf"{_EGRESS}\s*(?:of|:|：|约|大概|每月|per month)?\s*{_N}\s*{_BIG_UNIT}(?:\s*{_PER_MONTH})?"),
        ("min_memory", _MEM_ANCHORS, rf"{_MEM_WORD}\s*(?:of\s+|is\s+|:|：|{_MORE})?\s*{_N}\s*{_UNIT}(?:\s*{_PLUS})?"),
        ("min_memory", _MEM_ANCHORS, rf"{_N}\s*{_UNIT}\s*{_PLUS}?\s*(?:of\s+)?{_MEM_WORD}(?:\s*{_PLUS})?"),
        ("min_memory", _MORE_ANCHORS, rf"{_MORE}\s*{_N}\s*{_UNIT}(?:\s*(?:of\s+)?{_MEM_WORD})?"),
        ("min_memory", _PLUS_ANCHORS, rf"{_N}\s*{_UNIT}\s*{_PLUS}"),
        ("duration", None, rf"{_AFTER_ID}{_N}\s*-?\s*{_UNITS}(?![a-z0-9])"),
        ("duration", ("hour", "day", "week", "month", "year"),
         rf"{_AFTER_ID}(?P<n>a|an|one|two|three|four|five|six|seven|eight|nine|ten|twelve|half a)[\s-]+"
         r"(?P<unit>hours?|days?|weeks?|months?|years?)(?![a-z0-9])"),
        ("duration", ("小时", "钟头", "天", "周", "星期", "礼拜", "个月", "年"),
         rf"(?P<n>{_ZH_NUM})\s*(?P<unit>小时|钟头|天|周|个?星期|个?礼拜|个月|年)"),
        ("duration", ("month", "/mo", "月"),
         r"(?:per month|a month|monthly|/month|/mo|每月|每个月|月均|月度|一个月)(?P<unit>)(?P<n>)"),
        ("duration", ("year", "annual", "/yr", "年"),
         r"(?:per year|a year|yearly|annually|annual|/year|/yr|每年|年度)(?P<unit>)(?P<n>)"),
        ("count", _TIMES_ANCHORS, rf"{_AFTER_ID}(?P<span>(?P<n>\d{{1,4}})\s*[x×*])(?=\s*[a-z(]|\s*$){_NOT_TIMES}"),
        ("count", _TIMES_ANCHORS, r"(?:(?<=[\s(])|^|(?<=\d))(?P<span>[x×*]\s?(?P<n>\d{1,4}))(?![\d.a-z])(?<!86)"),
        ("count", ("gpu", "card", "accelerator", "device", "chip"),
         rf"{_AFTER_ID}(?P<n>\d{{1,4}})\s*-?\s*(?:gpus?|cards?|graphics cards?|accelerators?|devices|chips)(?![a-z])"),
        ("count", ("张", "块", "卡", "片", "颗"),
         rf"(?P<n>\d{{1,4}}|{_ZH_NUM})\s*(?:张|块|卡|片|颗)(?!钱)(?:卡|显卡|gpu)?"),
        ("count", ("个",), rf"(?P<span>(?P<n>\d{{1,4}}|{_ZH_NUM})\s*个)\s*(?=gpu|卡|显卡|[a-z]+\d)"),
        ("currency_usd", ("$",), r"\$\s*\d|\d\s*\$|us\$"),
    )
)  # fmt: skip


def _numbers(st: _State, vocab: Vocabulary) -> None:
    """Numbers with their units and context words: model size, top N, memory, storage, egress, durations, counts."""
    for name, anchors, pattern in _NUMERIC:
        if anchors is not None and not any(anchor in st.low for anchor in anchors):
            continue
        for m in pattern.finditer(st.low):
            if not m.group().strip():
                continue
            value = _numeric_value(name, m)
            if value is None:
                continue
            target, number = value
            if target == "durations":
                st.durations.append(number)
            elif target == "currency":
                st.currency = st.currency or "USD"
            elif getattr(st, target) is None:
                setattr(st, target, int(number) if target == "top_n" else number)
                if target == "min_gpu_memory_gb" and m.group()[0].isdigit():
                    st.memory_at = m.start()  # "A100 80GB memory": may turn out to be the A100's memory
            span = m.span("span") if "span" in pattern.groupindex and m.group("span") else m.span()
            st.take(*span)


def _numeric_value(name: str, m: re.Match) -> tuple[str, float] | None:
    if name == "currency_usd":
        return "currency", 1
    if name == "duration":
        if not m["n"]:
            return "durations", 730.0 if "月" in m.group() or "mo" in m.group() else 8760.0
        hours = _duration(m)
        return ("durations", hours) if hours else None
    if name == "model_zh":
        scale = {"亿": 0.1, "百亿": 10, "千亿": 100, "万亿": 1000}[m["unit"]]
        n = zh_number(m["n"]) if m["n"] else 1
        return ("model_size_b", n * scale) if n else None
    n = _number(m["n"]) if m["n"] else None
    if n is None or n <= 0:
        return None
    if name == "model_moe":
        return "model_size_b", float(m["a"]) * n
    if name == "model_size":
        return ("model_size_b", n) if n <= 10000 else None
    if name == "model_t":
        return "model_size_b", n * 1000
    if name in {"storage_gb", "egress_gb"}:
        return name, n * _per_unit(m["unit"])
    if name == "min_memory":
        return ("min_gpu_memory_gb", n) if 1 <= n <= 2048 else None
    if name == "top_n":
        return ("top_n", n) if 1 <= n <= 100 else None
    if name == "count":
        return ("gpu_count", n) if 0 < n <= 4096 else None
    return None


def _links(st: _State, toks: list[tuple[int, int, str]]) -> list[bool]:
    """links[k]: token k may be read together with token k-1 (only spaces, "-", "_", "." or "/" between)."""
    links = [False]
    for k in range(1, len(toks)):
        gap = st.low[toks[k - 1][1] : toks[k][0]]
        ok = len(gap) <= 2 and set(gap) <= _JOIN_GAP
        if ok and " " in gap and len(toks[k - 1][2]) == 1 and toks[k - 1][2].isalpha() and toks[k][2][0].isdigit():
            ok = False  # "a 100 dollar budget" is not an A100
        links.append(ok)
    return links


def _words(st: _State, vocab: Vocabulary) -> None:
    """ASCII words, longest phrase first: names (GPU, family, provider, region group) and keywords."""
    toks = [(m.start(), m.end(), nm.repair(m.group())) for m in _WORD.finditer(st.low)]
    links = _links(st, toks)
    vendor = [t[2] in nm.VENDOR_WORDS for t in toks]
    words = vocab.words
    i = 0
    while i < len(toks):
        step = 1
        longest = 1
        while longest < 4 and i + longest < len(toks) and links[i + longest]:
            longest += 1
        for n in range(longest, 0, -1):
            parts = [t[2] for t in toks[i : i + n]]
            hits = _case_ok(words.get("".join(parts)), st.text, toks[i][0], toks[i + n - 1][1])
            if not hits and any(vendor[i : i + n]):
                stripped = "".join(p for p, v in zip(parts, vendor[i : i + n], strict=True) if not v)
                hits = [h for h in words.get(stripped, ()) if h.field == "gpu"] if stripped else []
            if hits:
                start, end = toks[i][0], toks[i + n - 1][1]
                for hit in hits:
                    if hit.field == "gpu":
                        extra, hit = _gpu_suffix(st, toks, i + n, hit, vocab)
                        n += extra
                        end = toks[i + n - 1][1]
                        if hit.value[1] is None and st.memory_at is not None and 0 < st.memory_at - end <= 2:
                            hit = Hit("gpu", (hit.value[0], st.min_gpu_memory_gb))
                            st.min_gpu_memory_gb = st.memory_at = None
                        _count_before(st, toks, i)
                    st.apply(hit, start, end, vocab)
                st.used_tokens.update(range(i, i + n))
                st.take(start, end)
                step = n
                break
        i += step


def _case_ok(hits: list[Hit] | None, text: str, start: int, end: int) -> list[Hit]:
    if not hits:
        return []
    written = None
    kept = []
    for hit in hits:
        if hit.case:
            written = written if written is not None else re.sub(r"[^A-Za-z0-9]", "", text[start:end])
            if written != hit.case:
                continue
        kept.append(hit)
    return kept


def _gpu_suffix(st: _State, toks: list[tuple[int, int, str]], j: int, hit: Hit, vocab: Vocabulary) -> tuple[int, Hit]:
    """Memory ("80GB", "80") and form factor ("PCIe", "SXM5") right after a GPU name: (tokens taken, new hit)."""
    family, memory = hit.value
    form = None
    taken = 0
    while j + taken < len(toks) and taken < 3:
        k = j + taken
        gap = st.low[toks[k - 1][1] : toks[k][0]]
        if len(gap) > 2 or not set(gap) <= _JOIN_GAP | {"("}:
            break
        word = toks[k][2]
        m = _MEMORY_TOKEN.match(word)
        if nm.form_factor(word) and form is None:
            form = nm.form_factor(word)
        elif m and memory is None:
            size = float(m.group(1))
            unit = m.group(2) or (k + 1 < len(toks) and toks[k + 1][2] in {"gb", "g", "gib"} and
                                  st.low[toks[k][1] : toks[k + 1][0]] in {"", " "})  # fmt: skip
            if not unit and size not in vocab.gpu_memories.get(family, ()):
                break
            memory = size
            if m.group(2) is None and unit:
                taken += 1  # the separate "GB"
        elif word in {"gb", "g"} and memory is not None:
            pass
        else:
            break
        taken += 1
    if memory is None and form:
        memory = nm.memory_of_form(vocab.forms.get(family, {}), form)
    return taken, Hit("gpu", (family, memory))


def _count_before(st: _State, toks: list[tuple[int, int, str]], i: int) -> None:
    """A bare number or number word right before a GPU name is a count ("8 H100s", "a single A10G")."""
    if st.gpu_count is not None or i == 0 or (i - 1) in st.used_tokens:
        return
    prev = toks[i - 1][2]
    gap = st.low[toks[i - 1][1] : toks[i][0]]
    if gap.strip() or len(gap) > 2:
        return
    if prev.isdigit():
        value = float(prev) if len(prev) <= 4 else None
    else:
        value = _NUMBER_WORDS.get(prev) if prev not in {"a", "an", "half"} else None
    if value and 0 < value <= 4096:
        st.gpu_count = value
        st.used_tokens.add(i - 1)
        st.take(toks[i - 1][0], toks[i - 1][1])


def _cjk(st: _State, vocab: Vocabulary) -> None:
    """Chinese phrases, longest first, against the lexicon and the KB's Chinese names."""
    low, i = st.low, 0
    while i < len(low):
        if ord(low[i]) < 128:
            i += 1
            continue
        for length in vocab.cjk_lengths:
            phrase = low[i : i + length]
            hits = vocab.cjk.get(phrase) if len(phrase) == length else None
            if hits:
                for hit in hits:
                    st.apply(hit, i, i + length, vocab)
                st.take(i, i + length)
                i += length
                break
        else:
            i += 1


def _leftovers(st: _State, vocab: Vocabulary) -> None:
    """Words nobody claimed: a number after "cheapest", a bare memory size, and anything that looks like a name."""
    toks = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(st.low)]
    skip = -1
    for idx, (start, end, word) in enumerate(toks):
        memory = _MEMORY_TOKEN.match(word)
        if idx <= skip or word in _NOT_NAMES or word in _STOPWORDS:
            continue
        if word.isdigit():
            after_cheapest = any(0 <= start - end_ <= 2 and cue == "cheapest" for end_, cue in st.cue_ends)
            if st.top_n is None and after_cheapest and len(word) <= 3 and 0 < int(word) <= 100:
                st.top_n = int(word)  # "cheapest 3"
        elif memory and memory.group(2) and st.min_gpu_memory_gb is None and 4 <= float(memory.group(1)) <= 512:
            st.min_gpu_memory_gb = float(memory.group(1))  # "a 48GB card"
        elif not _UNIT_TOKEN.match(word):
            nxt = toks[idx + 1] if idx + 1 < len(toks) else None
            if (word.isalpha() and nxt and nxt[2].isdigit() and st.low[end : nxt[0]] in {" ", "-", ""}
                    and vocab.gpu_index and vocab.gpu_index.prefixed(word)):  # fmt: skip
                _name(st, vocab, st.text[start : nxt[1]], start, two_words=True)  # "RTX 5090"
                skip = idx + 1
            else:
                _name(st, vocab, st.text[start:end], start)


def _name(st: _State, vocab: Vocabulary, raw: str, pos: int, *, two_words: bool = False) -> None:
    """Resolve a leftover word that may be a name. Only GPU-shaped words ("H1000", "rtx") become issues: a plain
    word that resolves is taken (a typo such as "tencnet"), one that does not is just a word."""
    key, word = nm.compact(raw), raw.lower()
    if any(key in nm.compact(gpu) for gpu in st.gpus):
        return  # "紫霄C100": the model number of a GPU already named
    if two_words or _GPU_SHAPE.match(key) or (word.isalpha() and word in vocab.family_words):
        _ladder(st, raw, vocab.gpu_index, "gpu", "gpus", pos)
        return
    if word.isalpha() and len(word) < 5 or len(word) < 4:
        return
    if word.isalpha():  # "hoper", "tencnet"
        choices = ((vocab.gpu_word_index, "gpus", None), (vocab.provider_index, "providers", _PROVIDER_CUTOFF))
    else:  # "trainum2"
        choices = ((vocab.gpu_index, "gpus", None),)
    for index, listname, cutoff in choices:
        found = index.resolve(word, cutoff=cutoff) if index else None
        if isinstance(found, nm.Resolved):
            st.add(listname, [found.name], pos)
            return


_EXTRACTORS: tuple[Callable[[_State, Vocabulary], None], ...] = (_ids, _numbers, _words, _cjk, _leftovers)

# --- intent -----------------------------------------------------------------------------------------------------


def _items(st: _State) -> int:
    """How many things of one kind the question names: two or more make a comparison possible."""
    return max(
        len(st.gpus), len(st.providers), st.mentions.get("instance_types", 0), len(set(st.pricings)),
        st.mentions.get("regions", 0),
    )  # fmt: skip


def _has_target(st: _State) -> bool:
    return bool(st.gpus or st.instance_types or st.min_gpu_memory_gb)


def _needs_advice(st: _State) -> bool:
    return bool(st.workload or st.model_size_b)


_Rule = tuple[str, Callable[[_State], bool]]
# Evaluated in order; the first rule whose predicate holds gives the intent.
_INTENT_RULES: tuple[_Rule, ...] = (
    ("help", lambda s: set(s.cues) == {"help"} and not _anything(s)),
    ("checklist", lambda s: "checklist" in s.cues),
    ("history", lambda s: "history" in s.cues or ("change" in s.cues and _has_target(s))),
    ("digest", lambda s: "digest" in s.cues or "change" in s.cues
        or ("recent" in s.cues and "price" in s.cues and not _has_target(s) and not _anything_else(s))),
    ("pitfalls", lambda s: "pitfalls" in s.cues),
    ("tco", lambda s: "tco" in s.cues),
    ("compare", lambda s: "compare" in s.cues
        or (("either" in s.cues or "cheaper" in s.cues) and "cheapest" not in s.cues and _items(s) >= 2)),
    ("tco", lambda s: bool(s.durations) and bool({"price", "cheapest", "cheaper"} & set(s.cues))
        or bool(s.storage_gb or s.egress_gb)),
    ("cheapest", lambda s: "cheapest" in s.cues and _has_target(s)),
    ("recommend", lambda s: "recommend" in s.cues
        or ({"cheapest", "cheaper"} & set(s.cues) and _needs_advice(s) and not _has_target(s))),
    ("cheapest", lambda s: "cheapest" in s.cues or "cheaper" in s.cues),
    ("spec", lambda s: "spec" in s.cues),
    ("price", lambda s: "price" in s.cues),
    ("cheapest", lambda s: s.priority == "cost" and _has_target(s) and not _needs_advice(s)),
    ("recommend", lambda s: _needs_advice(s) or (bool(s.priority) and not _has_target(s))),
    ("tco", lambda s: bool(s.durations) and _has_target(s)),
    ("price", lambda s: bool(s.gpus or s.instance_types or s.providers or s.pricings or s.min_gpu_memory_gb
                             or s.regions or s.issues)),
    ("unknown", lambda s: True),
)  # fmt: skip


def _anything_else(st: _State) -> bool:
    """Named anything that narrows the question (so "prices today" is the digest, "H100 prices today" is not)."""
    return any((st.providers, st.regions, st.pricings, st.workload, st.model_size_b, st.gpu_count, st.issues))


def _anything(st: _State) -> bool:
    return any((st.gpus, st.providers, st.regions, st.instance_types, st.pricings, st.workload, st.model_size_b,
                st.gpu_count, st.priority, st.issues, st.durations, st.min_gpu_memory_gb))  # fmt: skip


def _intent(st: _State, empty: bool) -> str:
    if empty:
        return "help"
    return next(intent for intent, holds in _INTENT_RULES if holds(st))


# --- entry point ------------------------------------------------------------------------------------------------


def _lower(text: str) -> str:
    low = text.lower()
    return low if len(low) == len(text) else "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def parse(text: str, vocab: Vocabulary) -> Query:
    """Parse one message into a validated `Query` (pure: same text and vocabulary, same query).

    Args:
        text: the message as typed, with or without "/gpu" or an @-mention in front.
        vocab: `Vocabulary.from_kb(kb)`.
    """
    typed = text or ""
    text = unicodedata.normalize("NFKC", typed)  # full-width "Ａ１００" is "A100"
    body = _MENTION.sub("", text, count=1).strip()
    body = _MENTION.sub("", body, count=1).strip()[:MAX_CHARS]  # "@gpubot /gpu ..."
    st = _State(text=body, low=_lower(body))
    budget, budget_span = parse_budget.find(st.low)  # "under $2/GPU-h": read first, so "$2" is no count or size
    if budget_span:
        st.take(*budget_span)
        st.currency = budget.currency  # "$2/GPU-h" still says the question is in dollars
    machines, machines_span = parse_cluster.find(st.low)  # "2 nodes of 8 H100": 2 machines, 8 GPUs each
    if machines_span:
        st.take(*machines_span)
    for extract in _EXTRACTORS:
        extract(st, vocab)
    empty = not re.search(r"[a-z0-9]", body.lower()) and not _is_cjk(body)
    pricing, term_years = _pricing(st)
    if term_years:
        st.durations.remove(term_years * 8760.0)  # "3-year reserved": a pricing term, not how long it runs
    intent = _intent(st, empty)
    duration = st.durations[0] if st.durations else (term_years * 8760.0 if term_years and intent == "tco" else None)
    query = Query(
        text=typed,
        intent=intent,
        gpus=st.ordered("gpus"),
        gpu_count=st.gpu_count,
        min_gpu_memory_gb=st.min_gpu_memory_gb,
        pricing=pricing,
        providers=st.ordered("providers"),
        regions=st.ordered("regions"),
        instance_types=st.ordered("instance_types"),
        workload=st.workload,
        model_size_b=st.model_size_b,
        priority=st.priority,
        duration_hours=duration,
        storage_gb=st.storage_gb,
        egress_gb=st.egress_gb,
        currency=st.currency,
        top_n=st.top_n,
        language="zh" if _is_cjk(body) else "en",
        topic=_topic(st) if intent in {"pitfalls", "checklist"} else None,
        issues=st.issues,
        gpu_variants=st.gpu_variants,
        budget=budget,
        machines=machines,
    )
    from handlers.parse_work import refine  # the "work" intent: $ per 1M tokens of a benchmarked model

    return routing.reroute(refine(query, body))  # routing: break-even, spot-or-on-demand and off-topic questions


def _pricing(st: _State) -> tuple[str | None, int | None]:
    """(pricing, reserved term in years). Two different pricings named (a comparison) leave it unset."""
    kinds = list(dict.fromkeys(st.pricings))
    term = None
    if "reserved" in kinds:
        term = 3 if 3 * 8760.0 in st.durations else (1 if 8760.0 in st.durations else None)
        kinds = [f"reserved_{term or 1}y" if k == "reserved" else k for k in kinds]
    return (kinds[0] if len(kinds) == 1 else None), term


def _topic(st: _State) -> str | None:
    """What a pitfalls or checklist question is about: topic ids ("spot egress"), else the words left over."""
    if st.topics:
        return " ".join(st.topics)
    words = [w for w in _WORD.findall(st.low) if w not in _STOPWORDS and not w.isdigit()]
    return " ".join(words) or None
