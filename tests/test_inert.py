"""Text from elsewhere rendered inert (issue 14; dsh_notebook.inert): Markdown and maths drawn,
no markup from the text ever live in the page."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from dsh_notebook.inert import markdown_html, safe_url


def elements(page: str) -> list[tuple[str, dict]]:
    found: list[tuple[str, dict]] = []

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, dict(attrs)))

    P().feed(page)
    return found


ATTACKS = [
    '<img src=x onerror="alert(1)">',
    "<script>alert(1)</script>",
    "<svg onload=alert(1)><circle/></svg>",
    '<iframe src="https://example.org"></iframe>',
    '<a href="javascript:alert(1)">x</a>',
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](java&#x09;script:alert(1))",
    "[x](<javascript:alert(1)>)",
    "[x](vbscript:msgbox(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    "![x](https://example.org/track.png)",
    '<div style="background:url(javascript:alert(1))">x</div>',
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "[x][r]\n\n[r]: javascript:alert(1)",
    "$<img src=x onerror=alert(1)>$ and $$</span><script>alert(1)</script>$$",
]


@pytest.mark.parametrize("text", ATTACKS)
def test_no_markup_from_the_text_is_live(text):
    page = markdown_html(text)
    for tag, attrs in elements(page):
        assert tag in {"div", "p", "a", "span", "code", "pre", "em", "strong"}, (tag, page)
        assert not any(k.startswith("on") or k in ("src", "style") for k in attrs), (tag, attrs)
        if tag == "a":
            assert attrs["href"].startswith(("https://", "http://", "mailto:")), attrs
            assert attrs["rel"] == "noopener noreferrer nofollow"


def test_markdown_and_maths_are_drawn():
    page = markdown_html("# Title\n\n**R** is $\\rho L/A$, so\n\n$$R = 0.127\\ \\Omega$$\n\n- a\n- b\n\n"
                         "| q | v |\n|---|---|\n| R | 1 |\n\n[paper](https://doi.org/10.1063/1.4938384)")
    assert "<h1>Title</h1>" in page and "<strong>R</strong>" in page and "<li>a</li>" in page
    assert '<span class="math mathjax_process tex2jax_process">\\(\\rho L/A\\)</span>' in page
    assert '<div class="math mathjax_process tex2jax_process">\\[R = 0.127\\ \\Omega\\]</div>' in page
    assert "<table>" in page and '<a href="https://doi.org/10.1063/1.4938384"' in page


def test_an_image_is_a_text_link_never_loaded():
    page = markdown_html("![a cat](https://example.org/cat.png)")
    assert elements(page) == [("div", {"class": "dsh-inert mathjax_ignore tex2jax_ignore"}), ("p", {}), ("a", {
        "href": "https://example.org/cat.png", "rel": "noopener noreferrer nofollow", "target": "_blank"})]
    assert "[image: a cat]" in page


@pytest.mark.parametrize("url, ok", [("https://x.org/a", True), ("http://x.org", True), ("mailto:a@b.org", True),
                                     ("javascript:alert(1)", False), ("data:text/html,x", False), ("/relative", False),
                                     ("file:///etc/passwd", False), ("https://x.org/\nx", False), ("", False)])
def test_safe_url(url, ok):
    assert (safe_url(url) is not None) is ok


def test_no_style_and_mathjax_only_inside_the_maths():
    page = markdown_html("| a |\n|:--|\n| b |\n\nprice \\$5 and \\$\\href{javascript:x}{y}\\$ but $x^2$")
    assert "style=" not in page
    assert page.startswith('<div class="dsh-inert mathjax_ignore tex2jax_ignore">')
    assert '<span class="math mathjax_process tex2jax_process">\\(x^2\\)</span>' in page
    assert "$\\href{javascript:x}{y}$" in page  # escaped dollars stay text, under mathjax_ignore


def test_a_huge_text_is_shown_escaped_without_parsing():
    """A megabyte of '[' (seconds of Markdown parsing) is shown as escaped text at once."""
    from dsh_notebook.inert import MAX_MARKDOWN_CHARS

    page = markdown_html("<script>x</script>" + "[" * MAX_MARKDOWN_CHARS)
    assert page.startswith('<div class="dsh-inert mathjax_ignore tex2jax_ignore"><pre>&lt;script&gt;')
    assert [t for t, _ in elements(page)] == ["div", "pre"]
