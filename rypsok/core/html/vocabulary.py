"""The HTML vocabulary: every set of tag names, ARIA roles and class/id tokens.

Pure data, the one place these sets are written. It imports nothing from
rypsok, so any layer may use it (the fetch extractor, the snippet scanner in
``rypsok.core.boundary``) without loading html5lib or a pipeline. Small sets
are named by what the elements are; the sets a pass uses are derived from
them and say what they mean. docs/extraction.md explains how each is used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final


def _words(text: str) -> frozenset[str]:
    """A set of names written as one string of space-separated words."""
    return frozenset(text.split())


def _phrases(text: str) -> frozenset[str]:
    """A set of phrases written as one string separated by "|" (spaces kept)."""
    return frozenset(text.split("|"))


def _stems(text: str) -> tuple[str, ...]:
    """Substrings to look for, in the order written."""
    return tuple(text.split())


# --------------------------------------------------------------------------- element groups

# The document's root and body.
DOCUMENT: Final = frozenset({"html", "body"})
# Data about the page rather than the page: never rendered.
DOCUMENT_METADATA: Final = frozenset({"head", "title", "meta", "link", "base"})
# Script, style and their fallbacks: a reader never sees what they hold.
NEVER_RENDERED: Final = frozenset({"script", "style", "template", "noscript"})
# Raw-text elements a browser does not show when it supports what they stand in for.
FALLBACK_TEXT: Final = frozenset({"noembed", "noframes"})
# Another document, a plug-in, a drawing surface or a media player.
EMBEDDED: Final = _words(
    "iframe object embed param canvas audio video source track map area picture-source"
)
FRAMES: Final = frozenset({"frameset", "frame"})
FORM_CONTROLS: Final = _words(
    "input button select textarea option optgroup datalist output progress meter"
)
# Blocks that group form controls; their text (a legend) can be read.
FORM_BLOCKS: Final = frozenset({"form", "fieldset", "legend"})

HEADING_LEVELS: Final[Mapping[str, int]] = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
HEADINGS: Final = frozenset(HEADING_LEVELS)
HEADING_GROUP: Final = frozenset({"hgroup"})
# Lists whose items are <li>; <menu> and <dir> are read as <ul>.
LISTS: Final = frozenset({"ul", "ol", "menu", "dir"})
DEFINITION_LIST: Final = frozenset({"dl"})
DEFINITION_PARTS: Final = frozenset({"dt", "dd"})
LIST_ITEMS: Final = frozenset({"li"}) | DEFINITION_PARTS
TABLE_CELLS: Final = frozenset({"td", "th"})
TABLE_ROW_GROUPS: Final = frozenset({"thead", "tbody", "tfoot"})
TABLE_PARTS: Final = frozenset({"table", "caption", "tr"}) | TABLE_ROW_GROUPS | TABLE_CELLS
# Text shown as written, line breaks and spaces kept.
PREFORMATTED: Final = frozenset({"pre", "listing", "xmp", "plaintext"})
# The page's regions: its landmarks and sections.
SECTIONS: Final = frozenset(
    {"main", "article", "section", "nav", "aside", "header", "footer", "address"}
)
# Grouping blocks of flow content.
GROUPING: Final = frozenset({"div", "p", "hr", "blockquote", "figure", "figcaption", "center"})
# Disclosure widgets and dialogs.
INTERACTIVE_BLOCKS: Final = frozenset({"details", "summary", "dialog"})
# A line break: not a block, but it separates words.
LINE_BREAK: Final = frozenset({"br"})

# Inline elements the Markdown writer marks.
EMPHASIS: Final = frozenset({"em", "i"})
STRONG: Final = frozenset({"strong", "b"})
INLINE_CODE: Final = frozenset({"code", "kbd", "samp", "tt"})

# --------------------------------------------------------------------------- derived element sets

# Elements that start a new block of text when rendered.
BLOCK: Final = (
    DOCUMENT
    | SECTIONS
    | GROUPING
    | HEADINGS
    | HEADING_GROUP
    | LISTS
    | DEFINITION_LIST
    | LIST_ITEMS
    | TABLE_PARTS
    | PREFORMATTED
    | FORM_BLOCKS
    | INTERACTIVE_BLOCKS
)

# What a reader without scripts sees instead of a script's work. rypsok runs
# no script, so in the body it is content when it holds enough text (a forum's
# whole thread, rendered for crawlers); a short one ("enable JavaScript") is not.
SCRIPT_FALLBACK: Final = frozenset({"noscript"})

# Dropped by the tree builder as it builds them (tree.parse_html): nothing in
# them is ever shown.
DROPPED_WHILE_PARSING: Final = (NEVER_RENDERED - SCRIPT_FALLBACK) | FALLBACK_TEXT

# A ruby annotation: the reading printed over a character (furigana). Run into
# the line it doubles each annotated word ("子こども"), so the base text alone is kept.
RUBY_ANNOTATIONS: Final = frozenset({"rt", "rp"})

# Dropped by the extractor with everything inside: never rendered, or not content.
NOT_CONTENT: Final = (
    NEVER_RENDERED
    | FALLBACK_TEXT
    | DOCUMENT_METADATA
    | EMBEDDED
    | FRAMES
    | FORM_CONTROLS
    | RUBY_ANNOTATIONS
)

# The snippet scanner (rypsok.core.boundary.markup) skips these elements'
# content up to their end tag: a browser shows none of it as text. The same
# elements are hidden from the extractor: the tree builder drops all but
# <noscript> and <iframe>, the extractor removes <iframe> as embedded content
# and <noscript> unless the page is a script shell.
HIDDEN_IN_SNIPPETS: Final = NEVER_RENDERED | FALLBACK_TEXT | frozenset({"iframe"})

# Tags at which the snippet scanner puts a space so neighbouring words stay
# apart; every other tag joins its neighbours. It is every block the extractor
# renders as one, plus a line break and a list option (the extractor handles
# <br> itself and drops <option>). <html> and <body> are not: inside a body a
# browser ignores both tags, so the words beside them run together.
SNIPPET_WORD_BREAKS: Final = (BLOCK - DOCUMENT) | LINE_BREAK | frozenset({"option"})

# Where a main content can be: containers, not single paragraphs, headings,
# lists or their parts, tables or their parts (a cell can hold a whole layout),
# nor the document root.
CANDIDATES: Final = BLOCK - (
    frozenset({"html"})
    | HEADINGS
    | HEADING_GROUP
    | LISTS
    | DEFINITION_LIST
    | LIST_ITEMS
    | (TABLE_PARTS - frozenset({"td"}))
    | PREFORMATTED
    | frozenset({"p", "hr", "blockquote", "figure", "figcaption", "summary", "legend", "address"})
)

# Text blocks never cut from inside an article on their links alone.
TEXT_LEAVES: Final = HEADINGS | DEFINITION_PARTS | frozenset({"p", "pre", "blockquote"})

# Content a figure can hold that is not a picture: it keeps the figure.
RICH: Final = PREFORMATTED | frozenset({"table", "blockquote", "math"})

# --------------------------------------------------------------------------- roles

# Site chrome by element: navigation, page header and footer, sidebars.
CHROME_ELEMENTS: Final = frozenset({"nav", "aside", "footer", "header", "menu"})
CHROME_ROLES: Final = _words(
    "navigation banner contentinfo complementary search dialog alertdialog menu menubar"
    " toolbar tablist"
)
# The main content by element or by role (the same two words).
MAIN_ELEMENTS: Final = frozenset({"main", "article"})
MAIN_ROLES: Final = MAIN_ELEMENTS
# A role that says an image is decoration.
PRESENTATION_ROLES: Final = frozenset({"presentation", "none"})

# --------------------------------------------------------------------------- class and id tokens

# Class names that hide an element by convention (matched as whole class names).
HIDING_CLASSES: Final = _words(
    "hidden hide d-none is-hidden invisible sr-only visually-hidden visuallyhidden"
    " screen-reader-text screenreader element-invisible offscreen u-hidden hidden-xs"
    " skip-link skiplink show-for-sr"
)
# Class/id tokens of boxes no reader wants, whatever else the page is.
HARD_TOKENS: Final = _words(
    "cookie cookies consent gdpr cookiebanner newsletter paywall modal popup overlay"
    " breadcrumb breadcrumbs"
)
# Class/id tokens of chrome: they count against a region when choosing the
# main content and are cut from inside it.
CHROME_TOKENS: Final = _words(
    "nav navbar navigation menu menubar topnav sidenav subnav mainnav footer sidebar"
    " share sharing social sharebar related recommended recommendations promo promoted ad"
    " ads advert advertisement advertising adsense sponsor sponsored subscribe"
    " subscription signup outbrain taboola trending popular mostread pagination pager"
    " tagcloud signature postprofile copyright disclaimer"
)
# Substrings of a class/id that mark chrome inside a longer token ("leftsidebar").
CHROME_STEMS: Final = _stems(
    "sidebar footer navbar navigation advert sponsor social sharing subscribe related"
    " outbrain taboola noprint no-print navbox"
)
# Comment sections: against the article when there is one; kept on a page that is a thread.
COMMENT_TOKENS: Final = frozenset(
    {"comment", "comments", "disqus", "respond", "replies", "discussion", "reviews"}
)
# The start of a class/id word that names a shop's or a site's copy written for
# search engines ("seo-text", "seoFooterCopy"): a category's description, which
# readers of the page are shown as its text, even where the word also says "footer".
SEO_COPY_PREFIX: Final = "seo"
# Class/id tokens of a region that holds the main content.
MAIN_TOKENS: Final = _words(
    "content article post entry main body text story blog prose markdown docs"
    " documentation articlebody postbody thread message"
)
# Class/id tokens of pictures' furniture: captions, credits, galleries.
MEDIA_TOKENS: Final = _words(
    "credit credits photocredit figure figcaption image img photo picture video player"
)
MEDIA_STEMS: Final = ("caption", "gallery", "slideshow", "carousel", "lightbox")
# Class/id tokens of an article's metadata: bylines, dates, tags.
META_TOKENS: Final = _words(
    "byline byl author authors dateline date dates datestamp timestamp time pubdate"
    " published updated posted meta postmeta entrymeta tags tag categories category share"
    " sharing likes topics keywords print"
)
META_STEMS: Final = _stems(
    "byline dateline timestamp datestamp pubdate postedon posted-on author rating"
)
# Substrings of a class/id of a box about the author (biography, photo, links).
AUTHOR_STEMS: Final = _stems(
    "author-bio authorbio author-box authorbox author-info author-desc author-profile"
    " saboxplugin aboutauthor about-author author-card authorcard"
)
# A biography token on a box whose class also names a writer is an author box.
BIO_TOKENS: Final = _words("bio bios biography")
WRITER_STEMS: Final = _stems("author contributor writer")
# itemprop values (schema.org) of an article's metadata.
META_PROPS: Final = (
    "author",
    "datepublished",
    "datemodified",
    "datecreated",
    "interactionstatistic",
)
# Words of a class/id that name a skip link ("skip to content"): with a link to
# a place on the page, an accessibility shortcut, not content.
SKIP_STEM: Final = "skip"
# A heading over other pages' teasers, not over a part of the article ("Related
# articles", "Lesen Sie auch"), in the web's most used languages, compared with
# the heading's text lower-cased, its spaces collapsed and its end's punctuation
# stripped: whole headings, then the words such a heading starts with.
RELATED_HEADINGS: Final = _phrases(
    # English
    "related articles|related posts|related stories|related content|related news"
    "|related reading|related links|read more|read also|read next|also read|more stories"
    "|more news|more articles|you may also like|you might also like|recommended"
    "|recommended for you|most read|most popular|popular posts|trending|top stories"
    # German
    "|weitere artikel|weitere beiträge|weitere themen|weitere nachrichten|ähnliche artikel"
    "|ähnliche beiträge|verwandte artikel|verwandte themen|das könnte sie auch interessieren"
    "|das könnte dich auch interessieren|auch interessant|zum weiterlesen|lesen sie auch"
    "|mehr zum thema|meistgelesen|meistgelesene artikel|beliebte beiträge"
    # French
    "|à lire aussi|a lire aussi|lire aussi|dans la même rubrique|sur le même sujet"
    "|articles similaires|articles liés|articles connexes|vous aimerez aussi"
    "|vous aimerez peut-être aussi|les plus lus|à voir aussi"
    # Spanish
    "|te puede interesar|también te puede interesar|lee también|artículos relacionados"
    "|noticias relacionadas|contenido relacionado|más noticias|lo más leído|te recomendamos"
    "|quizás te interese|relacionados|relacionadas"
    # Portuguese
    "|leia também|veja também|artigos relacionados|notícias relacionadas|posts relacionados"
    "|mais lidas|mais lidos|você também pode gostar"
    # Italian
    "|leggi anche|articoli correlati|potrebbe interessarti|potrebbe interessarti anche"
    "|ti potrebbe interessare|i più letti|correlati"
    # Dutch
    "|lees ook|gerelateerde artikelen|meer nieuws|meest gelezen|ook interessant"
    # Polish
    "|czytaj także|czytaj też|przeczytaj też|przeczytaj także|zobacz także|zobacz też"
    "|powiązane artykuły|najczęściej czytane|polecamy"
    # Russian
    "|читайте также|похожие статьи|похожие материалы|по теме|другие новости|самое читаемое"
    "|рекомендуем|ещё по теме|еще по теме"
    # Turkish
    "|ilgili haberler|benzer haberler|bunlar da ilginizi çekebilir|en çok okunanlar"
    "|ilginizi çekebilir"
    # Japanese
    "|関連記事|関連ニュース|おすすめ記事|人気記事|こちらもおすすめ|あわせて読みたい"
    # Chinese
    "|相关文章|相關文章|相关阅读|相關閱讀|相关新闻|相關新聞|推荐阅读|推薦閱讀|热门文章|熱門文章"
    "|延伸阅读|延伸閱讀"
    # Korean
    "|관련 기사|관련기사|많이 본 뉴스|추천 기사"
)
RELATED_PREFIXES: Final = tuple(
    sorted(
        _phrases(
            "more from |mehr zu |mehr zum |mehr aus |weitere artikel zu"
            "|plus d'articles|d'autres articles|más sobre |mais sobre |altro su |altri articoli"
            "|meer over |więcej o |ещё о |еще о "
        )
    )
)
