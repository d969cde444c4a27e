"""Academic mode's text (spec: academic.md "The discipline text (single source)"): the SKILL.md
export is byte-identical to the sections, eight chapters in order, the ten self-check items, the
verification-log heading and escape line, sources and citation styles, and no product claims."""

from __future__ import annotations

import re

import pytest

from dsh_notebook.academic import prompt
from dsh_notebook.academic.prompt import (
    CHAPTER_TITLES,
    CHECKLIST,
    DISCIPLINE,
    ESCAPE_LINES,
    GATE_NOTICE,
    IDENTITY,
    VERIFICATION_HEADINGS,
    discipline,
    identity,
    skill_body,
    skill_markdown,
)

LANGS = ("zh", "en")

#: Identity + discipline length (Python ``len``), near the issue's "about 4,500 characters per
#: language": the English is terse, the Chinese spells the same rules out (see the module docstring).
TOTAL_RANGE = {"zh": (3_600, 4_800), "en": (4_500, 5_500)}
IDENTITY_MAX = 600

CHAPTER_TOPICS = {
    "zh": ["研究计划", "底线", "查找资料", "资料真实性三遍", "逻辑严谨性三遍", "交付格式", "十项自检", "诚实与边界"],
    "en": ["research plan", "Bottom lines", "evidence", "every cited source", "the logic", "Delivery",
           "self-check", "Honesty"],
}

SOURCE_KINDS = {
    "zh": ["同行评审的期刊论文与会议论文", "官方统计数据、标准与法律法规", "原始数据、代码与原始文献档案",
           "权威工具书与教科书", "有信誉的专家机构与学术组织发布的报告"],
    "en": ["peer-reviewed journal and conference papers", "official statistics, standards, laws and regulations",
           "primary data, code and original documents", "authoritative reference works and textbooks",
           "reports of reputable expert bodies and institutions"],
}

#: Words that would make a product claim about the harness or this package's internals.
PRODUCT_WORDS = re.compile(
    r"deepseek|harness|\bdsh\b|plugin|插件|system prompt|系统提示|\bgate\b|闸门|steer|reckoner|notebook|"
    r"jupyter|kernel|reasoning effort|max_?tokens|academic-switch|cordis",
    re.IGNORECASE,
)


def chapters(lang: str) -> dict[int, str]:
    """Chapter number -> chapter text (heading line excluded)."""
    parts = re.split(r"^## (\d+)\. .*$", discipline(lang), flags=re.MULTILINE)
    return {int(n): body.strip("\n") for n, body in zip(parts[1::2], parts[2::2], strict=True)}


def front_matter(text: str) -> dict[str, str]:
    """A tiny parser for a front matter made only of ``key: value`` lines."""
    assert text.startswith("---\n")
    head = text[4:text.index("\n---\n")]
    fields = {}
    for line in head.split("\n"):
        key, sep, value = line.partition(": ")
        assert sep and re.fullmatch(r"[a-z][a-z_-]*", key), f"not a 'key: value' line: {line!r}"
        assert key not in fields
        fields[key] = value
    return fields


@pytest.mark.parametrize("lang", LANGS)
def test_the_skill_body_is_byte_identical_to_the_sections(lang):
    text = skill_markdown(lang)
    body = identity(lang) + "\n\n" + discipline(lang)
    assert skill_body(text) == body
    assert text.endswith("\n---\n\n" + body + "\n") and not text.endswith("\n\n")
    assert identity(lang) == IDENTITY[lang] and discipline(lang) == DISCIPLINE[lang]


@pytest.mark.parametrize("lang", LANGS)
def test_the_front_matter_has_only_name_and_a_one_line_description(lang):
    text = skill_markdown(lang)
    fields = front_matter(text)
    assert list(fields) == ["name", "description"]
    assert fields["name"] == "academic-mode"
    desc = fields["description"]
    assert 40 <= len(desc) <= 300 and "\n" not in desc
    # a plain YAML scalar: no mapping colon, no comment, no leading indicator or quote
    assert ": " not in desc and " #" not in desc and desc[0] not in "-?:,[]{}#&*!|>'\"%@`"
    try:
        import yaml
    except ImportError:
        return
    assert yaml.safe_load(text.split("---\n")[1]) == fields


def test_skill_body_rejects_other_shapes():
    good = skill_markdown("en")
    for bad in (good[4:], good.replace("\n---\n\n", "\n---\n", 1), good + "\n", good.rstrip("\n"),
                good.replace("\n---\n", "\n", 1)):
        with pytest.raises(ValueError, match="SKILL.md"):
            skill_body(bad)


@pytest.mark.parametrize("lang", LANGS)
def test_eight_chapters_in_order(lang):
    headings = re.findall(r"^(#+) (.+)$", identity(lang) + "\n\n" + discipline(lang), flags=re.MULTILINE)
    assert [h for h, _ in headings] == ["#", "#"] + ["##"] * 8  # identity, discipline, 8 chapters
    numbered = [re.fullmatch(r"(\d+)\. (.+)", title).groups() for _, title in headings[2:]]
    assert [int(n) for n, _ in numbered] == list(range(1, 9))
    assert [t for _, t in numbered] == CHAPTER_TITLES[lang]
    for title, topic in zip(CHAPTER_TITLES[lang], CHAPTER_TOPICS[lang], strict=True):
        assert topic in title


def test_both_languages_have_the_same_list_structure_per_chapter():
    def shape(text):
        return [m.group(1) or "n" for m in re.finditer(r"^(- |  - )?(?:\d+\. )?", text, re.MULTILINE)
                if m.group(0)]

    zh, en = chapters("zh"), chapters("en")
    for n in range(1, 9):
        assert shape(zh[n]) == shape(en[n]), f"chapter {n}"


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_seven_holds_exactly_the_ten_checklist_items(lang):
    assert len(CHECKLIST[lang]) == 10
    seven = chapters(lang)[7]
    items = re.findall(r"^(\d+)\. (.+)$", seven, flags=re.MULTILINE)
    assert [int(n) for n, _ in items] == list(range(1, 11))
    assert [t for _, t in items] == CHECKLIST[lang]
    # no other chapter has a ten-item numbered list
    for n, text in chapters(lang).items():
        if n != 7:
            assert not re.search(r"^10\. ", text, flags=re.MULTILINE)
    # the result goes on the verification log's last line
    assert "10/10" in seven
    assert ("最后一行" if lang == "zh" else "last line") in seven


@pytest.mark.parametrize("lang", LANGS)
def test_lengths(lang):
    low, high = TOTAL_RANGE[lang]
    assert len(identity(lang)) <= IDENTITY_MAX
    assert low <= len(identity(lang)) + len(discipline(lang)) <= high


@pytest.mark.parametrize("lang", LANGS)
def test_the_heading_and_escape_line_appear_verbatim(lang):
    six = chapters(lang)[6]
    assert f"`{VERIFICATION_HEADINGS[lang]}`" in six
    assert f"`{ESCAPE_LINES[lang]}`" in six
    assert VERIFICATION_HEADINGS == {"zh": "核查记录", "en": "Verification log"}
    assert ESCAPE_LINES == {"zh": "本条无需核查记录", "en": "No verification log needed for this reply"}
    notice = GATE_NOTICE[lang]
    assert VERIFICATION_HEADINGS[lang] in notice and notice.endswith(ESCAPE_LINES[lang])
    assert notice.startswith("【学术模式 · 交付前核查】" if lang == "zh" else "[Academic mode · pre-delivery check]")


@pytest.mark.parametrize("lang", LANGS)
def test_five_kinds_of_source_are_named(lang):
    three = chapters(lang)[3]
    marks = ["（1）", "（2）", "（3）", "（4）", "（5）"] if lang == "zh" else ["(1)", "(2)", "(3)", "(4)", "(5)"]
    for mark, kind in zip(marks, SOURCE_KINDS[lang], strict=True):
        assert mark + kind in three.replace(mark + " ", mark)
    assert ("至少覆盖其中三类" if lang == "zh" else "at least three kinds") in three
    assert ("转引自" if lang == "zh" else '"cited in"') in three


@pytest.mark.parametrize("lang", LANGS)
def test_citation_styles_and_confidence_levels_are_named(lang):
    text = discipline(lang)
    assert "GB/T 7714-2025" in text and "APA 7" in text
    levels = ["  - 高：", "  - 中：", "  - 低："] if lang == "zh" else ["  - high:", "  - medium:", "  - low:"]
    two = chapters(lang)[2]
    assert all(level in two for level in levels)


def test_no_placeholders_left():
    texts = [*IDENTITY.values(), *DISCIPLINE.values(), *GATE_NOTICE.values(),
             *(item for items in CHECKLIST.values() for item in items), *map(skill_markdown, LANGS)]
    for text in texts:
        assert "{" not in text and "}" not in text


@pytest.mark.parametrize("lang", LANGS)
def test_no_product_claims(lang):
    for text in (skill_markdown(lang), GATE_NOTICE[lang]):
        assert not PRODUCT_WORDS.search(text), PRODUCT_WORDS.search(text)


def test_constants_and_language_errors():
    assert prompt.PROMPT_VERSION == "academic/1"
    for fn in (identity, discipline, skill_markdown, prompt.gate_notice):
        with pytest.raises(ValueError, match="'zh' or 'en'.*'fr'"):
            fn("fr")
