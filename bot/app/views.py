"""Buttons under answers and search results, persistent: their state is in the custom_id.

Every button is a `discord.ui.DynamicItem`, registered at start-up (`ITEMS`), so it keeps
working after a restart and never times out. A click looks its result up in the bot's
memory by the key in the custom_id; after a restart the result is rebuilt from the message
itself (the question is in its title); what cannot be rebuilt gets a short private note.

    pb:src:<key>:<ids>     More sources; <ids> are the paper ids the answer cited, in order, or
    pb:src:<key>:~<ids>    for an abstention, the closest papers it listed
                           (the bot reads them back to follow a conversation)
    pb:share:<key>         Share in channel (private answers); disabled once the answer is shared, so
                           the message itself says so, whatever the bot remembers
    pb:thread              Discuss in thread (public answers in a server channel)
    pb:pg:<p|n>:<key>:<page>:<k>:<owner>   Previous / Next through a search
    pb:save:<ids>          Save the papers (an answer's cited ones, or the paper shown) to the user's list
    pb:sv:<p|n>:<page>     Previous / Next through the clicking user's saved papers (read from the users file)
    pb:svx:<bib|ics>       Export the clicking user's saved papers as BibTeX or as a calendar
    pb:pl:<p|n>:<key>:<page>:<owner>   Previous / Next day of a plan
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import discord

from bot.app import embeds
from bot.app.identity import query_of, question_of

from bot.app import markdown
from bot.app import replies as messages
from bot.app.access import RateLimited, interaction_reach
from bot.app.failures import report_interaction_error
from bot.app.seam import bot_of
from bot.app.sending import NO_MENTIONS, respond
from paperbot.language import message_language
from retrieval.types import Answer, SearchResult

if TYPE_CHECKING:
    from typing_extensions import Self
    from bot.app.seam import BotSeam

log = logging.getLogger(__name__)

CUSTOM_ID = 100  # Discord's limit on a custom_id
SEARCH_DEPTH = 25  # papers fetched once per /search; the buttons page through them
_ID_SAFE = re.compile(r"^[A-Za-z0-9._:-]+$")  # a server library's ids hold ":" (g1a2b3:42)


def new_key() -> str:
    """The key a result is remembered by (8 hex digits: unique enough for the results kept in memory)."""
    return secrets.token_hex(4)


def cited_ids(answer: Answer) -> tuple[str, ...]:
    return tuple(c.paper_id for c in answer.citations)


def listed_ids(answer: Answer) -> tuple[str, ...]:
    """The papers an answer numbers [1], [2], …: its citations, or the closest papers an abstention lists."""
    return tuple(h.paper_id for h in answer.hits) if answer.abstained else cited_ids(answer)


def _ids_part(ids: tuple[str, ...], room: int) -> str:
    """As many of `ids` as fit in `room` characters, comma-separated, in order; unsafe ids end the list."""
    out: list[str] = []
    for pid in ids:
        if not _ID_SAFE.match(pid) or len(",".join([*out, pid])) > room:
            break
        out.append(pid)
    return ",".join(out)


def listing_from_message(message: discord.Message) -> tuple[tuple[str, ...], bool] | None:
    """(the paper ids one of the bot's answers numbered, whether it abstained), or None for any other message."""
    for row in message.components:
        for child in getattr(row, "children", []):
            m = MoreSources.__discord_ui_compiled_template__.fullmatch(getattr(child, "custom_id", None) or "")
            if m:
                return tuple(i for i in m.group("ids").split(",") if i), bool(m.group("mark"))
    return None


def ids_from_message(message: discord.Message) -> tuple[str, ...] | None:
    """The cited paper ids the bot stored in one of its answers (none for an abstention), or None when it is
    not an answer of ours."""
    listing = listing_from_message(message)
    if listing is None:
        return None
    return () if listing[1] else listing[0]


def _shared(message: discord.Message) -> bool:
    """The answer was shared already: its Share button is disabled (the mark survives restarts)."""
    return any(getattr(child, "disabled", False) and Share.__discord_ui_compiled_template__.fullmatch(
        getattr(child, "custom_id", None) or "") for row in message.components for child in getattr(row, "children", []))


class Persistent:
    """Shared by every button (mixed in before discord.ui.DynamicItem): lookups count against the cheap bucket,
    errors reach the one handler."""

    async def callback(self, interaction: discord.Interaction) -> None:
        try:
            retry = bot_of(interaction).lookups.hit(interaction.user.id)
            if retry is not None:
                raise RateLimited(retry)
            await self.run(interaction)
        except Exception as error:  # noqa: BLE001 - discord.py would only log it: the user must hear back
            await report_interaction_error(interaction, error)

    async def run(self, interaction: discord.Interaction) -> None:
        raise NotImplementedError


def _lang(interaction: discord.Interaction) -> str:
    """The language of what a click shows: that of the question on the message clicked, else the user's locale."""
    question = question_of(interaction.message) if interaction.message else None
    return message_language(question, str(interaction.locale))


async def gone(interaction: discord.Interaction, name: str = "RESULT_GONE", **fields) -> None:
    """A short private note, the message `name` in the clicker's language (into the deferred response if any)."""
    await respond(interaction, embeds.text_pages(messages.text(name, _lang(interaction), **fields)), ephemeral=True)


class MoreSources(Persistent, discord.ui.DynamicItem[discord.ui.Button],
                  template=r"pb:src:(?P<key>[0-9a-f]{8}):(?P<mark>~?)(?P<ids>[A-Za-z0-9._,:-]*)"):
    def __init__(self, key: str, ids: tuple[str, ...] = (), abstained: bool = False, lang: str = "en") -> None:
        prefix = f"pb:src:{key}:{'~' if abstained else ''}"
        super().__init__(discord.ui.Button(label=messages.text("MORE_SOURCES_LABEL", lang),
                                           style=discord.ButtonStyle.secondary, custom_id=prefix + _ids_part(ids, CUSTOM_ID - len(prefix))))
        self.key = key

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str],
                             /) -> MoreSources:
        return cls(match["key"], tuple(i for i in match["ids"].split(",") if i), bool(match["mark"]))

    async def run(self, interaction: discord.Interaction) -> None:
        bot = bot_of(interaction)
        answer = bot.recall(self.key)
        if not isinstance(answer, Answer):
            message = interaction.message
            question = question_of(message) if message else None
            if message is None or not question:
                await gone(interaction)
                return
            await interaction.response.defer(thinking=True, ephemeral=True)
            # A follow-up's sources come from its conversation, which Discord still has.
            history = await bot.conversations.history(message)
            result = await bot.search_follow_up(question, history, reach=await interaction_reach(interaction))
            answer = Answer(question=question, text="", abstained=result.abstained, citations=[], hits=result.hits)
            bot.remember(self.key, answer)
        await respond(interaction, embeds.sources_pages(answer), ephemeral=True)


class Share(Persistent, discord.ui.DynamicItem[discord.ui.Button], template=r"pb:share:(?P<key>[0-9a-f]{8})"):
    def __init__(self, key: str, *, disabled: bool = False, lang: str = "en") -> None:
        super().__init__(discord.ui.Button(label=messages.text("SHARE_LABEL", lang), style=discord.ButtonStyle.primary,
                                           custom_id=f"pb:share:{key}", disabled=disabled))
        self.key = key

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str],
                             /) -> Share:
        return cls(match["key"])

    async def run(self, interaction: discord.Interaction) -> None:
        bot = bot_of(interaction)
        message = interaction.message
        # The message says whether it was shared (its Share button is disabled once it is), so a restart
        # changes nothing; the memory only guards two clicks at once, before the first one's edit lands.
        if message is None or _shared(message) or not bot.mark_shared(message.id):
            await gone(interaction, "ALREADY_SHARED")
            return
        answer = bot.recall(self.key)
        listing = listing_from_message(message)
        if isinstance(answer, Answer):
            pages = embeds.answer_pages(answer)
            ids, abstained, hits = listed_ids(answer), answer.abstained, bool(answer.hits)
        else:  # after a restart: the message itself is the answer
            pages = [embeds.Page(cards=tuple(embeds.card_from(e) for e in message.embeds))]
            ids, abstained = listing if listing is not None else ((), False)
            hits = listing is not None
        # First mark the private answer as shared (its Share button disabled), then post the public copy.
        await interaction.response.edit_message(
            view=answer_view(self.key, ids, hits=hits, ephemeral=True, thread=False, abstained=abstained, shared=True,
                             lang=_lang(interaction)),
            allowed_mentions=NO_MENTIONS)
        by = markdown.escape(messages.text("SHARED_BY", _lang(interaction), user=interaction.user.display_name))
        pages[0] = embeds.Page(content=by, cards=pages[0].cards)
        view = answer_view(self.key, ids, hits=hits, ephemeral=False, thread=interaction.guild is not None,
                           abstained=abstained, lang=_lang(interaction))
        await respond(interaction, pages, ephemeral=False, view=view)


class SavePapers(Persistent, discord.ui.DynamicItem[discord.ui.Button], template=r"pb:save:(?P<ids>[A-Za-z0-9._,:-]+)"):
    """Save: the papers in the custom_id go to the clicking user's saved list (kept across restarts)."""

    def __init__(self, ids: tuple[str, ...], lang: str = "en") -> None:
        prefix = "pb:save:"
        custom_id = prefix + _ids_part(ids, CUSTOM_ID - len(prefix))
        super().__init__(discord.ui.Button(label=messages.text("SAVE_LABEL", lang), style=discord.ButtonStyle.success,
                                           custom_id=custom_id))
        self.ids = tuple(i for i in custom_id[len(prefix):].split(",") if i)

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str],
                             /) -> SavePapers:
        return cls(tuple(i for i in match["ids"].split(",") if i))

    async def run(self, interaction: discord.Interaction) -> None:
        bot = bot_of(interaction)
        # Only papers the clicker may see here: a custom_id is the client's word, not the bot's.
        reach = await interaction_reach(interaction)
        visible = {p.paper_id for p in await bot.papers() if reach.sees(p)}
        new, total = await bot.save_papers(interaction.user.id, tuple(i for i in self.ids if i in visible))
        lang = message_language(None, str(interaction.locale))
        await respond(interaction, embeds.text_pages(messages.text("SAVED_NEW", lang, new=new, count=len(self.ids),
                                                                   total=total)), ephemeral=True)


def can_save(ids: tuple[str, ...]) -> bool:
    """Whether a Save button can carry these ids (the first must be safe and fit in a custom_id)."""
    return bool(_ids_part(ids, CUSTOM_ID - len("pb:save:")))


def paper_view(paper_id: str, lang: str = "en") -> discord.ui.View | None:
    """Under /paper: Save."""
    if not can_save((paper_id,)):
        return None
    view = discord.ui.View(timeout=None)
    view.add_item(SavePapers((paper_id,), lang))
    return view


class DiscussInThread(Persistent, discord.ui.DynamicItem[discord.ui.Button], template=r"pb:thread"):
    def __init__(self, lang: str = "en") -> None:
        super().__init__(discord.ui.Button(label=messages.text("THREAD_LABEL", lang),
                                           style=discord.ButtonStyle.secondary, custom_id="pb:thread"))

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str],
                             /) -> DiscussInThread:
        return cls()

    async def run(self, interaction: discord.Interaction) -> None:
        message = interaction.message
        if message is None or interaction.guild is None:
            await gone(interaction, "THREAD_SERVERS_ONLY")
            return
        lang = _lang(interaction)
        question = question_of(message) or messages.text("THREAD_NAME", lang)
        await interaction.response.defer(thinking=True, ephemeral=True)
        try:
            thread = await message.create_thread(name=markdown.clip(question, 100), auto_archive_duration=1440)
        except discord.Forbidden:
            await gone(interaction, "THREAD_FORBIDDEN")
            return
        except discord.HTTPException as exc:
            if exc.code != 160004:  # a thread was already started from this message
                raise
            await gone(interaction, "THREAD_EXISTS", thread=f"<#{message.id}>")
            return
        await thread.send(messages.text("THREAD_INTRO", lang), allowed_mentions=NO_MENTIONS)
        await gone(interaction, "THREAD_STARTED", thread=thread.mention)


class Paging(Persistent):
    """Previous / Next with the result's key, page, page size and owner in the custom_id (`prefix`)."""

    prefix = ""

    def __init__(self, direction: str, key: str, page: int, k: int, owner: int, *, disabled: bool = False,
                 lang: str = "en") -> None:
        label = messages.text("PREVIOUS_LABEL" if direction == "p" else "NEXT_LABEL", lang)
        super().__init__(  # type: ignore[call-arg]  # a mixin: DynamicItem follows it in each pager's bases
            discord.ui.Button(label=label, style=discord.ButtonStyle.secondary, disabled=disabled,
                              custom_id=f"{self.prefix}:{direction}:{key}:{max(page, 0)}:{k}:{owner}"))
        self.key, self.page, self.k, self.owner = key, max(page, 0), k, owner

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str],
                             /) -> Self:
        return cls(match["dir"], match["key"], int(match["page"]), max(1, int(match["k"])), int(match["owner"]))

    def mine(self, interaction: discord.Interaction) -> bool:
        """The asker's own (or a private) message: page it in place; anyone else gets a private copy."""
        message = interaction.message
        return message is not None and (message.flags.ephemeral or interaction.user.id == self.owner)

    async def show(self, interaction: discord.Interaction, mine: bool, page: embeds.Page,
                   view: discord.ui.View | None) -> None:
        kwargs: dict[str, Any] = {"embeds": [embeds.to_embed(c) for c in page.cards], "view": view,
                                  "allowed_mentions": NO_MENTIONS}
        if interaction.response.is_done():
            await interaction.edit_original_response(**kwargs)
        elif mine:
            await interaction.response.edit_message(**kwargs)
        else:  # someone else's result: their own private copy, the asker's message stays put
            await interaction.response.send_message(**kwargs, ephemeral=True)


def pager_view(item: Callable[..., discord.ui.Item[Any]], key: str, page: int, pages: int, k: int, owner: int,
                lang: str = "en") -> discord.ui.View | None:
    if pages <= 1:
        return None
    view = discord.ui.View(timeout=None)
    view.add_item(item("p", key, page - 1, k, owner, disabled=page <= 0, lang=lang))
    view.add_item(item("n", key, page + 1, k, owner, disabled=page >= pages - 1, lang=lang))
    return view


class Pager(Paging, discord.ui.DynamicItem[discord.ui.Button],
            template=r"pb:pg:(?P<dir>[pn]):(?P<key>[0-9a-f]{8}):(?P<page>\d{1,3}):(?P<k>\d{1,2}):(?P<owner>\d{1,20})"):
    """Previous / Next through the papers of one /search."""

    prefix = "pb:pg"

    async def run(self, interaction: discord.Interaction) -> None:
        bot = bot_of(interaction)
        message = interaction.message
        mine = self.mine(interaction)
        result = bot.recall(self.key)
        if not isinstance(result, SearchResult):
            query = query_of(message) if message else None
            if not query:
                await gone(interaction)
                return
            # Searching again may wait behind other questions: acknowledge within Discord's 3 s first.
            await (interaction.response.defer() if mine else interaction.response.defer(thinking=True,
                                                                                          ephemeral=True))
            result = await bot.search(query, SEARCH_DEPTH, reach=await interaction_reach(interaction))
            bot.remember(self.key, result)
        page = min(self.page, embeds.search_page_count(result, self.k) - 1)
        owner = self.owner if mine else interaction.user.id
        lang = message_language(result.query, str(interaction.locale))
        await self.show(interaction, mine, embeds.search_page(result, page, self.k, lang),
                        search_view(self.key, result, page, self.k, owner, _lang(interaction)))


def answer_view(key: str, ids: tuple[str, ...], *, hits: bool, ephemeral: bool, thread: bool,
                abstained: bool = False, shared: bool = False, lang: str = "en") -> discord.ui.View | None:
    """More sources (when retrieval found papers), Share (private answers; disabled once `shared`), Discuss in
    thread (public, in a server). `ids`: the papers the answer numbered (an abstention's closest: `abstained`)."""
    view = discord.ui.View(timeout=None)
    if hits:
        view.add_item(MoreSources(key, ids, abstained, lang))
    if not abstained and can_save(ids):  # an abstention's closest papers are no answer to save
        view.add_item(SavePapers(ids, lang))
    if ephemeral:
        view.add_item(Share(key, disabled=shared, lang=lang))
    elif thread:
        view.add_item(DiscussInThread(lang))
    return view if view.children else None


def view_for_answer(bot: BotSeam, answer: Answer, *, ephemeral: bool, thread: bool) -> discord.ui.View | None:
    """Remembers `answer` for its buttons and builds them."""
    key = new_key()
    bot.remember(key, answer)
    return answer_view(key, listed_ids(answer), hits=bool(answer.hits), ephemeral=ephemeral, thread=thread,
                       abstained=answer.abstained, lang=answer.language)


def search_view(key: str, result: SearchResult, page: int, k: int, owner: int,
                lang: str = "en") -> discord.ui.View | None:
    return pager_view(Pager, key, page, embeds.search_page_count(result, k), k, owner, lang)


class ListPager(Paging, discord.ui.DynamicItem[discord.ui.Button],
                template=r"pb:ls:(?P<dir>[pn]):(?P<key>[0-9a-f]{8}):(?P<page>\d{1,4}):(?P<k>\d{1,2}):(?P<owner>\d{1,20})"):
    """Previous / Next through a list of papers (an author's, an area's), remembered under `key`."""

    prefix = "pb:ls"

    async def run(self, interaction: discord.Interaction) -> None:
        remembered = bot_of(interaction).recall(self.key)
        if not (isinstance(remembered, tuple) and len(remembered) == 2):
            await gone(interaction)
            return
        heading, papers = remembered
        page = min(self.page, max(1, -(-len(papers) // self.k)) - 1)
        mine = self.mine(interaction)
        owner = self.owner if mine else interaction.user.id
        shown = embeds.paper_list_page(heading, papers, page, self.k, lang=_lang(interaction))
        await self.show(interaction, mine, shown,
                        list_view(self.key, len(papers), page, self.k, owner, _lang(interaction)))


ITEMS = (MoreSources, Share, DiscussInThread, Pager, ListPager, SavePapers)


def list_view(key: str, total: int, page: int, k: int, owner: int, lang: str = "en") -> discord.ui.View | None:
    return pager_view(ListPager, key, page, max(1, -(-total // k)), k, owner, lang)
