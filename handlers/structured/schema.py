"""The common schema.org types, normalised: one flat, typed object per declared node.

Each group (``Article``, ``Product``, …) has a ``TypedDict`` naming its fields (all optional:
a page declares what it declares) and a reader from a JSON-LD-shaped node. Every object
carries ``type`` (the declared type, e.g. ``NewsArticle``) and ``source`` (``json-ld`` or
``microdata``). Field names are snake_case; dates are ISO 8601, durations ISO 8601
(``PT20M``), prices and ratings numbers, enumeration members their bare names
(``InStock``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict, cast

from handlers.structured.values import (
    LONG_CHARS,
    Nodes,
    address,
    date,
    duration,
    enumeration,
    integer,
    name,
    names,
    number,
    plain,
    text,
    texts,
    type_names,
    url,
    urls,
)


class Normalised(TypedDict, total=False):
    """What every normalised object carries: its declared type and the syntax it came in."""

    type: str
    source: str


class Article(Normalised, total=False):
    """``Article`` and its kinds (``NewsArticle``, ``BlogPosting``, ``Report``,
    ``DiscussionForumPosting``, …)."""

    headline: str
    description: str
    authors: list[str]
    published: str
    modified: str
    image: str
    publisher: str
    url: str
    section: str
    keywords: list[str]
    language: str


class Offer(TypedDict, total=False):
    price: float
    currency: str
    availability: str
    condition: str
    seller: str
    url: str


class Product(Normalised, total=False):
    """``Product`` (also ``ProductGroup``, ``IndividualProduct``, ``Vehicle``…). ``price``,
    ``currency`` and ``availability`` are the first offer's; an ``AggregateOffer`` gives
    ``low_price``/``high_price``/``offer_count``; ``offers`` lists them when there are
    several."""

    name: str
    description: str
    brand: str
    sku: str
    gtin: str
    mpn: str
    image: str
    url: str
    category: str
    price: float
    currency: str
    availability: str
    low_price: float
    high_price: float
    offer_count: int
    offers: list[Offer]
    rating: float
    best_rating: float
    rating_count: int
    review_count: int


# "yield" is a keyword: the functional form names it.
Recipe = TypedDict("Recipe", {
    "type": str, "source": str, "name": str, "description": str, "authors": list[str],
    "published": str, "image": str, "ingredients": list[str], "instructions": list[str],
    "prep_time": str, "cook_time": str, "total_time": str, "yield": str, "category": str,
    "cuisine": str, "calories": str, "rating": float, "rating_count": int,
}, total=False)


class Question(TypedDict, total=False):
    question: str
    answer: str


class FAQPage(Normalised, total=False):
    name: str
    questions: list[Question]


class Event(Normalised, total=False):
    name: str
    description: str
    start: str
    end: str
    location: str
    address: str
    organizer: str
    status: str
    attendance_mode: str
    url: str
    image: str
    price: float
    currency: str


class Crumb(TypedDict, total=False):
    name: str
    url: str


class BreadcrumbList(Normalised, total=False):
    items: list[Crumb]


class Organization(Normalised, total=False):
    name: str
    url: str
    logo: str
    description: str
    same_as: list[str]
    address: str
    telephone: str


class Person(Normalised, total=False):
    name: str
    url: str
    image: str
    job_title: str
    works_for: str
    same_as: list[str]


class VideoObject(Normalised, total=False):
    name: str
    description: str
    thumbnail: str
    uploaded: str
    duration: str
    content_url: str
    embed_url: str


class JobPosting(Normalised, total=False):
    title: str
    description: str
    organization: str
    location: str
    employment_type: list[str]
    posted: str
    valid_through: str
    salary_min: float
    salary_max: float
    salary_currency: str
    salary_unit: str
    remote: bool


# --------------------------------------------------------------------------- groups
_ARTICLES = frozenset(name.lower() for name in (
    "Article", "NewsArticle", "BlogPosting", "Report", "ScholarlyArticle", "TechArticle",
    "LiveBlogPosting", "OpinionNewsArticle", "AnalysisNewsArticle", "ReportageNewsArticle",
    "ReviewNewsArticle", "BackgroundNewsArticle", "AskPublicNewsArticle", "SatiricalArticle",
    "SocialMediaPosting", "DiscussionForumPosting", "MedicalScholarlyArticle",
    "AdvertiserContentArticle", "APIReference", "Posting"))
_PRODUCTS = frozenset(name.lower() for name in (
    "Product", "ProductGroup", "IndividualProduct", "ProductModel", "SomeProducts", "Vehicle",
    "Car", "Motorcycle"))
_EVENTS = frozenset(("festival", "hackathon", "eventseries"))
_ORGANIZATIONS = frozenset(name.lower() for name in (
    "Organization", "Corporation", "NGO", "LocalBusiness", "CollegeOrUniversity", "School",
    "Restaurant", "Hotel", "Airline", "Library", "Consortium", "Project", "Store",
    "ProfessionalService", "MedicalClinic", "Hospital", "Dentist", "Physician", "Attorney",
    "LegalService", "RealEstateAgent", "TravelAgency", "AutoDealer", "FinancialService",
    "BankOrCreditUnion", "InsuranceAgency", "PerformingGroup", "SportsTeam"))
_ORGANIZATION_ENDINGS = ("organization", "business", "store", "company")
_EXACT = {"recipe": "Recipe", "faqpage": "FAQPage", "breadcrumblist": "BreadcrumbList",
          "person": "Person", "videoobject": "VideoObject", "jobposting": "JobPosting"}


def group_of(kinds: list[str]) -> tuple[str, str] | None:
    """(group, declared type) for the first of ``kinds`` in a group, else None."""
    for kind in kinds:
        low = kind.lower()
        if low in _ARTICLES:
            return "Article", kind
        if low in _PRODUCTS:
            return "Product", kind
        if low in _EXACT:
            return _EXACT[low], kind
        if low.endswith("event") or low in _EVENTS:
            return "Event", kind
        if low in _ORGANIZATIONS or low.endswith(_ORGANIZATION_ENDINGS):
            return "Organization", kind
    return None



# --------------------------------------------------------------------------- readers
def _article(nodes: Nodes, node: dict[str, Any]) -> dict[str, Any]:
    return {
        "headline": text(nodes, node.get("headline")) or text(nodes, node.get("name")),
        "description": text(nodes, node.get("description"), LONG_CHARS),
        "authors": names(nodes, node.get("author")),
        "published": date(nodes, node.get("datePublished") or node.get("dateCreated")),
        "modified": date(nodes, node.get("dateModified")),
        "image": url(nodes, node.get("image")),
        "publisher": name(nodes, node.get("publisher")),
        "url": url(nodes, node.get("url")) or url(nodes, node.get("mainEntityOfPage")),
        "section": text(nodes, node.get("articleSection")),
        "keywords": _keywords(nodes, node.get("keywords")),
        "language": text(nodes, node.get("inLanguage"), 40),
    }


def _keywords(nodes: Nodes, value: Any) -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    return texts(nodes, value, 20, 100)


_GTINS = ("gtin13", "gtin", "gtin12", "gtin14", "gtin8", "isbn")


def _product(nodes: Nodes, node: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {
        "name": text(nodes, node.get("name")),
        "description": text(nodes, node.get("description"), LONG_CHARS),
        "brand": name(nodes, node.get("brand")) or name(nodes, node.get("manufacturer")),
        "sku": text(nodes, node.get("sku"), 100),
        "gtin": next(filter(None, (text(nodes, node.get(key), 100) for key in _GTINS)), None),
        "mpn": text(nodes, node.get("mpn"), 100),
        "image": url(nodes, node.get("image")),
        "url": url(nodes, node.get("url")),
        "category": text(nodes, node.get("category")),
    }
    found.update(_offers(nodes, node.get("offers")))
    found.update(_rating(nodes, node.get("aggregateRating")))
    return found


def _offers(nodes: Nodes, value: Any) -> dict[str, Any]:
    """The price fields of a product or event from its ``offers`` (one ``Offer``, a list,
    or an ``AggregateOffer``, which may list its own)."""
    found: dict[str, Any] = {}
    offers: list[Offer] = []
    for item in nodes.each(value, 20):
        if not isinstance(item, dict):
            continue
        if "aggregateoffer" in (k.lower() for k in type_names(item)) or (
                "lowPrice" in item or "highPrice" in item):
            found.update(low_price=number(nodes, item.get("lowPrice")),
                         high_price=number(nodes, item.get("highPrice")),
                         offer_count=integer(nodes, item.get("offerCount")),
                         currency=text(nodes, item.get("priceCurrency"), 10))
            inner = [_offer(nodes, i) for i in nodes.each(item.get("offers"), 20)
                     if isinstance(i, dict)]
            offers.extend(o for o in inner if o)
            if found.get("low_price") is not None and not offers:
                found["price"] = found["low_price"]
        else:
            offer = _offer(nodes, item)
            if offer:
                offers.append(offer)
    priced = next((o for o in offers if "price" in o), offers[0] if offers else None)
    if priced:
        for key in ("price", "currency", "availability"):
            found[key] = found.get(key) or priced.get(key)
    if len(offers) > 1:
        found["offers"] = offers[:10]
    return found


def _offer(nodes: Nodes, node: dict[str, Any]) -> Offer:
    spec = nodes.resolve(node.get("priceSpecification"))
    spec = spec[0] if isinstance(spec, list) and spec else spec
    spec = spec if isinstance(spec, dict) else {}
    offer = {
        "price": number(nodes, node.get("price")) if node.get("price") is not None
        else number(nodes, spec.get("price")),
        "currency": text(nodes, node.get("priceCurrency") or spec.get("priceCurrency"), 10),
        "availability": enumeration(nodes, node.get("availability")),
        "condition": enumeration(nodes, node.get("itemCondition")),
        "seller": name(nodes, node.get("seller")),
        "url": url(nodes, node.get("url")),
    }
    return cast(Offer, _present(offer))


def _rating(nodes: Nodes, value: Any) -> dict[str, Any]:
    rating = next((r for r in nodes.each(value, 2) if isinstance(r, dict)), None)
    if rating is None:
        return {}
    return {"rating": number(nodes, rating.get("ratingValue")),
            "best_rating": number(nodes, rating.get("bestRating")),
            "rating_count": integer(nodes, rating.get("ratingCount")),
            "review_count": integer(nodes, rating.get("reviewCount"))}


def _recipe(nodes: Nodes, node: dict[str, Any]) -> dict[str, Any]:
    nutrition = nodes.resolve(node.get("nutrition"))
    recipe_yield = node.get("recipeYield")
    return {
        "name": text(nodes, node.get("name")),
        "description": text(nodes, node.get("description"), LONG_CHARS),
        "authors": names(nodes, node.get("author")),
        "published": date(nodes, node.get("datePublished")),
        "image": url(nodes, node.get("image")),
        "ingredients": texts(nodes, node.get("recipeIngredient") or node.get("ingredients")),
        "instructions": _steps(nodes, node.get("recipeInstructions")),
        "prep_time": duration(nodes, node.get("prepTime")),
        "cook_time": duration(nodes, node.get("cookTime")),
        "total_time": duration(nodes, node.get("totalTime")),
        "yield": " / ".join(texts(nodes, recipe_yield, 3, 100)) or None,
        "category": text(nodes, node.get("recipeCategory")),
        "cuisine": text(nodes, node.get("recipeCuisine")),
        "calories": text(nodes, nutrition.get("calories"), 50)
        if isinstance(nutrition, dict) else None,
        **_rating(nodes, node.get("aggregateRating")),
    }


def _steps(nodes: Nodes, value: Any, depth: int = 0) -> list[str]:
    """Recipe steps: text (one step per line), ``HowToStep`` nodes, ``HowToSection`` nodes
    (their steps, flattened), or lists of these."""
    steps: list[str] = []
    for item in nodes.each(value):
        if isinstance(item, str):
            steps.extend(s for s in (plain(line, LONG_CHARS) for line in item.splitlines()[:50])
                         if s)
        elif isinstance(item, dict):
            inner = item.get("itemListElement")
            if inner is not None and depth < 3:
                steps.extend(_steps(nodes, inner, depth + 1))
            else:
                one = text(nodes, item.get("text"), LONG_CHARS) or text(nodes, item.get("name"),
                                                                         LONG_CHARS)
                if one:
                    steps.append(one)
        if len(steps) >= 50:
            break
    return steps[:50]


def _faq(nodes: Nodes, node: dict[str, Any]) -> dict[str, Any]:
    questions: list[Question] = []
    for item in nodes.each(node.get("mainEntity") or node.get("hasPart")):
        if not isinstance(item, dict):
            continue
        asked = text(nodes, item.get("name"), LONG_CHARS) or text(nodes, item.get("text"),
                                                                   LONG_CHARS)
        answer = next((a for a in nodes.each(item.get("acceptedAnswer"), 2)), None) or next(
            (a for a in nodes.each(item.get("suggestedAnswer"), 2)), None)
        answered = (text(nodes, answer.get("text"), LONG_CHARS) if isinstance(answer, dict)
                    else text(nodes, answer, LONG_CHARS))
        if asked:
            questions.append(cast(Question, _present({"question": asked, "answer": answered})))
    return {"name": text(nodes, node.get("name")), "questions": questions}


def _event(nodes: Nodes, node: dict[str, Any]) -> dict[str, Any]:
    place = next((p for p in nodes.each(node.get("location"), 4)), None)
    offers = _offers(nodes, node.get("offers"))
    return {
        "name": text(nodes, node.get("name")),
        "description": text(nodes, node.get("description"), LONG_CHARS),
        "start": date(nodes, node.get("startDate")),
        "end": date(nodes, node.get("endDate")),
        "location": name(nodes, place) if isinstance(place, dict) else text(nodes, place),
        "address": address(nodes, place.get("address")) if isinstance(place, dict) else None,
        "organizer": name(nodes, node.get("organizer")),
        "status": enumeration(nodes, node.get("eventStatus")),
        "attendance_mode": enumeration(nodes, node.get("eventAttendanceMode")),
        "url": url(nodes, node.get("url")),
        "image": url(nodes, node.get("image")),
        "price": offers.get("price"),
        "currency": offers.get("currency"),
    }


def _breadcrumbs(nodes: Nodes, node: dict[str, Any]) -> dict[str, Any]:
    crumbs: list[tuple[float, int, Crumb]] = []
    for index, item in enumerate(nodes.each(node.get("itemListElement"), 30)):
        if not isinstance(item, dict):
            continue
        target = nodes.resolve(item.get("item"))
        crumb = _present({
            "name": text(nodes, item.get("name")) or (
                name(nodes, target) if isinstance(target, dict) else None),
            "url": url(nodes, target) or url(nodes, item.get("url")),
        })
        if crumb:
            position = number(nodes, item.get("position"))
            crumbs.append((index if position is None else position, index, cast(Crumb, crumb)))
    return {"items": [crumb for _, _, crumb in sorted(crumbs, key=lambda c: c[:2])][:20]}


def _organization(nodes: Nodes, node: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": text(nodes, node.get("name")) or text(nodes, node.get("legalName")),
        "url": url(nodes, node.get("url")),
        "logo": url(nodes, node.get("logo")),
        "description": text(nodes, node.get("description"), LONG_CHARS),
        "same_as": urls(nodes, node.get("sameAs")),
        "address": address(nodes, node.get("address")),
        "telephone": text(nodes, node.get("telephone"), 50),
    }


def _person(nodes: Nodes, node: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name(nodes, node),
        "url": url(nodes, node.get("url")),
        "image": url(nodes, node.get("image")),
        "job_title": text(nodes, node.get("jobTitle")),
        "works_for": name(nodes, node.get("worksFor")),
        "same_as": urls(nodes, node.get("sameAs")),
    }


def _video(nodes: Nodes, node: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": text(nodes, node.get("name")),
        "description": text(nodes, node.get("description"), LONG_CHARS),
        "thumbnail": url(nodes, node.get("thumbnailUrl")) or url(nodes, node.get("thumbnail")),
        "uploaded": date(nodes, node.get("uploadDate")),
        "duration": duration(nodes, node.get("duration")),
        "content_url": url(nodes, node.get("contentUrl")),
        "embed_url": url(nodes, node.get("embedUrl")),
    }


def _job(nodes: Nodes, node: dict[str, Any]) -> dict[str, Any]:
    places = [p for p in nodes.each(node.get("jobLocation"), 4) if isinstance(p, dict)]
    salary = nodes.resolve(node.get("baseSalary"))
    salary = salary if isinstance(salary, dict) else {}
    amount = nodes.resolve(salary.get("value"))
    amount = amount if isinstance(amount, dict) else {"value": amount}
    value = number(nodes, amount.get("value"))
    return {
        "title": text(nodes, node.get("title")) or text(nodes, node.get("name")),
        "description": text(nodes, node.get("description"), LONG_CHARS),
        "organization": name(nodes, node.get("hiringOrganization")),
        "location": next(filter(None, (address(nodes, p.get("address")) for p in places)),
                         None),
        "employment_type": texts(nodes, node.get("employmentType"), 5, 50),
        "posted": date(nodes, node.get("datePosted")),
        "valid_through": date(nodes, node.get("validThrough")),
        "salary_min": number(nodes, amount.get("minValue")) if value is None else value,
        "salary_max": number(nodes, amount.get("maxValue")) if value is None else value,
        "salary_currency": text(nodes, salary.get("currency"), 10),
        "salary_unit": text(nodes, amount.get("unitText"), 20),
        "remote": True if (text(nodes, node.get("jobLocationType"), 40) or "").upper()
        == "TELECOMMUTE" else None,
    }


READERS: dict[str, Callable[[Nodes, dict[str, Any]], dict[str, Any]]] = {
    "Article": _article, "Product": _product, "Recipe": _recipe, "FAQPage": _faq,
    "Event": _event, "BreadcrumbList": _breadcrumbs, "Organization": _organization,
    "Person": _person, "VideoObject": _video, "JobPosting": _job,
}
GROUPS = tuple(READERS)


def _present(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` without the absent ones (None, empty text or list)."""
    return {k: v for k, v in fields.items() if v is not None and v != "" and v != []}


def normalise(nodes: Nodes, node: dict[str, Any], source: str) -> tuple[str, dict[str, Any]] | None:
    """(group, normalised object) for a node of a known type that declares anything, else
    None."""
    found = group_of(type_names(node))
    if found is None:
        return None
    group, kind = found
    fields = _present(READERS[group](nodes, node))
    if not fields:
        return None
    return group, {"type": kind, "source": source, **fields}
