"""Product fields from the page as a reader sees it: the price shown beside the product's
heading, stock phrases in the page's language, a buy button, a labelled product code
("SKU", "Model", "Item no.", "Art.-Nr.", …).

Reads the visible text the HTML handler already made (whitespace collapsed) and the buy
buttons' labels (read before cleaning drops buttons); nothing here walks the tree again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lxml import etree

from handlers.fields.candidates import Candidate, evidence_of
from handlers.fields.values import parse_price

AFTER_HEADING = 700  # characters after the heading where its price is looked for
STOCK_WINDOW = 1_000  # ... and its stock phrases
CODE_WINDOW = 8_000  # ... and its labelled codes
LISTED = 3  # a buy label or stock phrase this many times near the product is a list's
# ISO 4217 codes pages write beside prices (a bare three-letter word is not one).
_CODES = ("USD|EUR|GBP|CHF|JPY|CNY|INR|RUB|PLN|CZK|HUF|SEK|NOK|DKK|BRL|ARS|CLP|MXN|COP|PEN|"
          "CAD|AUD|NZD|HKD|SGD|KRW|TRY|UAH|RON|BGN|ILS|ZAR|AED|SAR|PKR|THB|VND|PHP|IDR|MYR|"
          "NGN|EGP|TWD|ISK|HRK|RSD|KZT|QAR|KWD")
_SIGN = (rf"(?:[€£$¥₹₽₩₪₺₴₫฿₱₦]|R\$|US\$|C\$|A\$|HK\$|S\$|\b(?:{_CODES})(?![A-Za-z])|"
         r"\bRs\.?|\bzł|\bkr\.?|"
         r"\bKč|\b[Kk]n\b|\blei|\bруб\.?|\bгрн\.?|원|円|元|\bFr\.|\bFt\b|\bлв\.?)")
_AMOUNT = r"\d{1,3}(?:[.,\s\u00a0']\d{3})*(?:[.,]\d{1,2})?(?!\d)|\d+(?:[.,]\d{1,2})?(?!\d)"
PRICE = re.compile(rf"{_SIGN}\s?(?:{_AMOUNT})|(?:{_AMOUNT})\s?{_SIGN}")
# Labels of a price that is not the one paid: a recommended, list or former price.
_LIST_PRICE = re.compile(
    r"(?:\brrp|\blist price|\bwas|\bregular price|\breg\.|\bmsrp|\buvp|"
    r"\bunverb\.? preisempf\.?|\bstatt|\bprix conseillé|\bau lieu de|\bprix barré|"
    r"\bprecio (?:normal|anterior|de lista)|\bantes|\bprezzo (?:consigliato|di listino)|"
    r"\bcena katalogowa|\bpoprzednia cena|\bbyla cena|\bpůvodní cena|\bpôvodná cena)"
    r"\s*:?\s*$", re.IGNORECASE)
# Phrases that say a product cannot be bought now, then that it can; several languages.
_OUT = re.compile(
    r"\b(?:out of stock|sold out|currently unavailable|no longer available|not available|"
    r"temporarily unavailable|agotado|sin stock|no disponible|épuisé|rupture de stock|"
    r"indisponible|ausverkauft|nicht (?:auf lager|verfügbar|lieferbar)|esaurito|"
    r"non disponibile|esgotado|indisponível|fora de estoque|niedostępny|brak w magazynie|"
    r"wyprzedany|nedostupné|vypredané|nie je skladom|není skladem|uitverkocht|"
    r"niet (?:op voorraad|leverbaar)|slutsåld|udsolgt|utsolgt|loppuunmyyty|"
    r"нет в наличии|распродано|немає в наличності|немає в наявності|nav noliktavā|"
    r"izpārdots|laos otsas|nema na (?:stanju|zalihi)|rasprodano|stokta yok|tükendi|"
    r"在庫切れ|売り切れ|缺货|售罄|品切れ|품절|일시품절)\b", re.IGNORECASE)
_IN = re.compile(
    r"\b(?:in stock|available now|ready to ship|en stock|disponible|auf lager|lieferbar|"
    r"verfügbar|disponibile|in magazzino|em estoque|disponível|dostępny|na stanie|"
    r"skladom|skladem|op voorraad|i lager|på lager|varastossa|в наличии|є в наявності|"
    r"ir noliktavā|laos|na stanju|na zalihi|stokta|在庫あり|有货|재고있음)\b", re.IGNORECASE)
_BUY = re.compile(
    r"\b(?:add to (?:your |my )?(?:cart|bag|basket|trolley)|buy (?:it )?now|"
    r"add to shopping (?:cart|bag)|"
    r"ajouter au panier|añadir al (?:carrito|carro)|agregar al (?:carrito|carro)|"
    r"comprar(?: ahora)?|in den (?:warenkorb|einkaufswagen)|jetzt kaufen|"
    r"aggiungi al carrello|acquista ora|adicionar (?:ao|à) (?:carrinho|sacola)|"
    r"do koszyka|kup teraz|do košíka|do košíku|in winkelwagen|lägg i varukorgen|"
    r"læg i kurv|legg i handlekurv|lisää ostoskoriin|в корзину|купить|до кошика|"
    r"pievienot grozam|lisa ostukorvi|dodaj u košaricu|kupi|sepete ekle|カートに入れる|"
    r"加入购物车|장바구니|구매하기|bid now|place bid|make offer|order now|"
    r"pre-?order now)\b", re.IGNORECASE)
# Labels before a product code, then the code: a word with a digit (letters, digits and
# -_./ inside).
_CODE_LABEL = re.compile(
    r"(?:\bsku|\bmodel(?: (?:no|number|code))?\.?|\bitem (?:no|number|#|code)\.?|\bitem #|"
    r"\bproduct (?:code|id|no|number)\.?|\bpart (?:no|number)\.?|\bart(?:ikel)?\.?-?nr\.?|"
    r"\bartikelnummer|\bref(?:erence|érence|erencia)?\.?|\bcódigo(?: de producto)?|"
    r"\bcodice(?: articolo| prodotto)?|\bkod(?: produktu)?|\bnumer katalogowy|"
    r"\bprodukta kods|\bkatalognummer|\basin|\bmpn|\bstyle(?: no| number|#)?\.?|"
    r"\bad id|\bitem id|\blisting id|商品編號|品番|型番|상품번호)"
    r"\s*[:#№.]?\s*(?:no\.?\s*)?([A-Za-z0-9][A-Za-z0-9_./-]{1,38}[A-Za-z0-9])",
    re.IGNORECASE)
_DIGIT = re.compile(r"\d")


def shown_text(page: etree._Element) -> str:
    """The cleaned page's text with its pieces apart ("£1,149.00" and "Product code" are
    two elements, not one word), whitespace collapsed; a piece starting with "." or ","
    stays joined to the one before (a price's cents in their own element)."""
    parts: list[str] = []
    for piece in page.itertext():
        if parts and piece[:1] in (".", ","):
            parts[-1] += piece
        else:
            parts.append(piece)
    return " ".join(" ".join(parts).split())


def heading_span(visible: str, heading: str) -> tuple[int, int] | None:
    """Where the product's heading is in the visible text (first occurrence)."""
    wanted = " ".join(heading.split())
    if len(wanted) < 3:
        return None
    start = visible.find(wanted)
    if start < 0:
        low = visible.casefold()
        start = low.find(wanted.casefold())
        if start < 0:
            return None
    return start, start + len(wanted)


def price_candidates(visible: str, span: tuple[int, int] | None,
                     currency_hint: str | None) -> Iterator[Candidate]:
    """The first price shown after the product's heading."""
    if span is None:
        return
    window = visible[span[1]: span[1] + AFTER_HEADING]
    for match in PRICE.finditer(window):
        if _LIST_PRICE.search(window, max(0, match.start() - 40), match.start()):
            continue  # a recommended or former price, shown beside the one paid
        amount, currency = parse_price(match.group(), currency_hint)
        if amount is None:
            continue
        evidence = evidence_of(window[max(0, match.start() - 60): match.end() + 20])
        sale = _sale_price(window, match, amount, currency_hint)
        if sale is not None:  # "€219.99 -50% €110.00": the price paid is the lower
            amount, evidence = sale
        yield Candidate("price", amount, "page", evidence)
        if currency:
            yield Candidate("currency", currency, "page", evidence)
        return


_DISCOUNT = re.compile(r"-\s?\d{1,2}\s?%")
SALE_GAP = 30  # characters between the two prices of a discount


def _sale_price(window: str, first: re.Match[str], amount: str,
                currency_hint: str | None) -> tuple[str, str] | None:
    """(the lower price, the evidence) when ``first`` is one of two prices written side by
    side with a discount percentage beside them, else None."""
    second = PRICE.search(window, first.end(), first.end() + SALE_GAP)
    if second is None:
        return None
    around = window[first.start(): second.end() + 8]
    if not _DISCOUNT.search(around):
        return None
    other, _ = parse_price(second.group(), currency_hint)
    if other is None:
        return None
    from decimal import Decimal

    lower = min(amount, other, key=Decimal)
    return lower, evidence_of(f"{around} (the discounted price)")


def stock_candidates(visible: str, span: tuple[int, int] | None, buttons: list[str],
                     source: str, price: str | None) -> Iterator[Candidate]:
    """Availability from stock phrases near the heading (the page when it has none), then
    from a buy control: a button labelled so, or an element the markup names so
    (``id="add-to-cart-button"``, ``class="add-to-basket"``; searched in ``source``, the
    page's HTML, when given); last, ``price`` (the evidence of a price the page offers) with
    no out-of-stock phrase near the heading."""
    start = span[0] if span else 0
    window = visible[start: start + STOCK_WINDOW]
    around = visible[start: start + 2 * STOCK_WINDOW]
    out, shown = _own_phrase(_OUT, window, around), _own_phrase(_IN, window, around)
    first = min((m for m in (out, shown) if m), key=lambda m: m.start(), default=None)
    if first is not None:
        state = "OutOfStock" if first is out else "InStock"
        yield Candidate("availability", state, "page",
                        evidence_of(window[max(0, first.start() - 40): first.end() + 40]))
    for label in buttons:
        # The same buy label on several buttons is a product list's (one per card).
        if _BUY.search(label) and buttons.count(label) < LISTED:
            yield Candidate("availability", "InStock", "page", evidence_of(f"<button>{label}"))
            return
    if not source:  # the caller has not yet seen any sign of a product on the page
        return
    control = buy_control(source)
    if control is not None:
        yield Candidate("availability", "InStock", "page", evidence_of(control))
        return
    if price is not None and out is None:
        # Offered at a price, and nothing near the product says it cannot be bought: the
        # weakest reading (a classified ad shows no button and no stock line).
        yield Candidate("availability", "InStock", "page",
                        evidence_of(f"offered at {price}; no out-of-stock phrase"))


CARD_CHARS = 300  # at most this far apart, one phrase per card of a product strip


def _own_phrase(pattern: re.Pattern[str], window: str, around: str
                ) -> re.Match[str] | None:
    """The first stock phrase in ``window`` that is the product's own, not a product
    strip's: a strip writes the same phrase under each card ("Produkt niedostępny" under
    every "other products in this range"), :data:`LISTED` times or more, each within
    :data:`CARD_CHARS` of the one before (``around`` is the window and what follows)."""
    folded = around.casefold()
    for match in pattern.finditer(window):
        if not _in_strip(folded, match.group().casefold(), match.start()):
            return match
    return None


def _in_strip(text: str, phrase: str, at: int) -> bool:
    """Whether the ``phrase`` written at ``at`` is one of a run of :data:`LISTED` or more
    in ``text``, each within :data:`CARD_CHARS` of the last."""
    positions = []
    start = text.find(phrase)
    while start >= 0:
        positions.append(start)
        start = text.find(phrase, start + 1)
    run: list[int] = []
    for position in positions:
        if run and position - run[-1] > CARD_CHARS:
            if at in run and len(run) >= LISTED:
                return True
            run = []
        run.append(position)
    return at in run and len(run) >= LISTED


# How markup names a buy control, in an attribute value (lower-cased page source).
_BUY_NAMES = ("add-to-cart", "addtocart", "add_to_cart", "add-to-basket", "addtobasket",
              "add_to_basket", "add-to-bag", "addtobag", "add_to_bag", "buy-now", "buynow",
              "buy_now")
_BUY_NAME = re.compile("|".join(map(re.escape, _BUY_NAMES)))
_NOT_CONTROLS = ("<link", "<meta", "<script", "<style")
SOURCE_CHARS = 3_000_000  # page source searched for a buy control


def buy_control(source: str) -> str | None:
    """The start tag of the first element whose attributes name it a buy control, else
    None. A plain search of the page source (no tree walk): a name inside a tag, not in a
    style sheet or a script."""
    low = source[:SOURCE_CHARS].lower()
    for seen, match in enumerate(_BUY_NAME.finditer(low)):
        if seen >= 50:
            break
        position = match.start()
        opened = low.rfind("<", max(0, position - 1000), position)
        closed = low.rfind(">", max(0, position - 1000), position)
        if opened > closed and not low.startswith(_NOT_CONTROLS, opened):
            end = low.find(">", position)
            return source[opened: end + 1 if end > 0 else position + 100]
    return None


def code_candidates(visible: str, span: tuple[int, int] | None) -> Iterator[Candidate]:
    """Product codes shown after a label, from the heading on (:data:`CODE_WINDOW`)."""
    start = span[0] if span else 0
    seen: set[str] = set()
    for match in _CODE_LABEL.finditer(visible, start, start + CODE_WINDOW):
        code = match.group(1)
        if not _DIGIT.search(code) or code in seen:
            continue
        seen.add(code)
        yield Candidate("sku", code, "page", evidence_of(match.group()))
        if len(seen) >= 5:
            return


_ID_PARAMETER = re.compile(r"(?:^|_)(?:id|pid|sku|item|itemid|product|productid|iid)$",
                           re.IGNORECASE)
_URL_CODE = re.compile(r"(?<![A-Za-z0-9])(?:\d{6,20}|(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Z])"
                       r"[A-Z0-9]{8,20})(?![A-Za-z0-9])")


def url_code_candidates(page_url: str, declared_url: str | None) -> Iterator[Candidate]:
    """The item identifier the page's own URL (its canonical URL when it declares one)
    carries: an ``id``-like query parameter, else a long number or an upper-case code in
    its path, last segment first. The least trusted SKU: the page names itself by it."""
    from urllib.parse import parse_qsl, urlsplit

    for address in filter(None, (declared_url, page_url)):
        try:
            parts = urlsplit(address)
        except ValueError:
            continue
        for name, value in parse_qsl(parts.query):
            if _ID_PARAMETER.search(name) and _URL_CODE.fullmatch(value.upper()):
                yield Candidate("sku", value, "page", evidence_of(address))
                return
        for segment in reversed(parts.path.split("/")):
            codes = _URL_CODE.findall(segment)
            if codes:
                yield Candidate("sku", codes[-1], "page", evidence_of(address))
                return


def button_labels(root: etree._Element) -> list[str]:
    """The labels of the page's enabled buttons and submit inputs (read before cleaning
    drops them), at most 200. A disabled button says nothing about stock: pages disable
    the buy button until a size or model is chosen, and scripts enable it."""
    labels = []
    for element in root.iter("button", "input"):
        if element.get("disabled") is not None or (
                element.get("aria-disabled") or "").lower() == "true":
            continue
        if element.tag == "input":
            if (element.get("type") or "").lower() not in ("submit", "button"):
                continue
            label = element.get("value") or ""
        else:
            label = " ".join("".join(element.itertext()).split())
        label = label or element.get("aria-label") or element.get("title") or ""
        if label:
            labels.append(label[:100])
        if len(labels) >= 200:
            break
    return labels


MAX_HEADINGS = 5


def headings(root: etree._Element) -> list[str]:
    """The texts of the page's first non-empty ``<h1>`` elements (at most
    :data:`MAX_HEADINGS`)."""
    found = []
    for heading in root.iter("h1"):
        text = " ".join("".join(heading.itertext()).split())
        if text:
            found.append(text[:300])
            if len(found) >= MAX_HEADINGS:
                break
    return found


def product_span(visible: str, wanted: list[str]) -> tuple[int, int] | None:
    """Where the product's heading is: the first of ``wanted`` (the page's headline,
    then its ``<h1>`` texts) shown on the page, except that when the headline is not shown
    (a title that is only the site's name), the first ``<h1>`` with a price after it wins
    over one without (a navigation box's ``<h1>`` comes before the product's)."""
    first = heading_span(visible, wanted[0]) if wanted else None
    if first is not None:
        return first  # the usual case: nothing more is searched
    shown = [span for span in (heading_span(visible, w) for w in wanted[1:]) if span]
    return next((s for s in shown if PRICE.search(visible, s[1], s[1] + AFTER_HEADING)),
                shown[0] if shown else None)


__all__ = ["PRICE", "button_labels", "code_candidates", "heading_span",
           "headings", "price_candidates", "product_span", "shown_text", "stock_candidates"]

