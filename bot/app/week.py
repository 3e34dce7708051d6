"""The conference week in Discord: /plan, /saved, /watch and /forget, and their buttons.

Each command turns an interaction into one call to the core (retrieval/plan.py, paperbot/userdata.py
through the client's methods) and the result into pages; saved-paper buttons read the users file, so
they keep working after a restart. Digests are sent by bot/app/watcher.py.
"""

from __future__ import annotations

import re
from typing import Any

import discord
from discord import app_commands

from bot.app import embeds

from bot.app import markdown

from bot.app import autocomplete
from bot.app import replies as bot_messages
from bot.app.access import admins_only, interaction_reach, lookup_limited, rate_limited
from bot.app.seam import bot_of
from bot.app.sending import NO_MENTIONS, respond
from bot.app.views import Paging, Persistent, gone, new_key, pager_view
from paperbot import bibtex, messages
from paperbot.errors import UserDataError
from paperbot.ics import calendar
from paperbot.language import message_language
from paperbot.records import Paper
from paperbot.text import strip_control
from retrieval.plan import Plan, build_plan, check_day, paper_events, plan_events

SAVED_PAGE = 10
PLAN_MAX_BYTES = 64 * 1024
FORMATS = [app_commands.Choice(name="bibtex", value="bib"), app_commands.Choice(name="calendar", value="ics")]


def _lang(interaction: discord.Interaction, text: str | None = None) -> str:
    return message_language(text, str(interaction.locale))


async def _private(interaction: discord.Interaction, text: str) -> None:
    """A short private message (into the deferred response when there is one)."""
    await respond(interaction, embeds.text_pages(text), ephemeral=True)


# -- files -----------------------------------------------------------------------------------------


def bibtex_file(papers: list[Paper]) -> bytes:
    return ("\n\n".join(bibtex.entry(p) for p in papers) + "\n").encode("utf-8")


def calendar_file(papers: list[Paper], name: str) -> bytes:
    return calendar(paper_events(papers), name=name).encode("utf-8")


# -- /plan -----------------------------------------------------------------------------------------


@app_commands.command(name="plan", description="Your plan for the week: the matching papers' talks and posters in "
                                               "time order, with a calendar file.")
@app_commands.describe(topic="A topic, e.g. preference optimization", text="Paste an abstract instead of a topic",
                       file="…or attach it as a .txt file", saved="Plan from your saved papers",
                       day="Only this day (YYYY-MM-DD, the program's local date)", k="Papers to plan for (default 10)")
@app_commands.check(rate_limited)
async def plan(interaction: discord.Interaction, topic: app_commands.Range[str, 1, 300] | None = None,
               text: app_commands.Range[str, 1, 4000] | None = None, file: discord.Attachment | None = None,
               saved: bool = False, day: app_commands.Range[str, 1, 10] | None = None,
               k: app_commands.Range[int, 1, 25] = 10) -> None:
    bot = bot_of(interaction)
    lang = _lang(interaction, topic or text)
    try:
        day = check_day(day.strip()) if day else ""
    except ValueError:
        await interaction.response.send_message(bot_messages.text("PLAN_BAD_DAY", lang), ephemeral=True,
                                                allowed_mentions=NO_MENTIONS)
        return
    body = " ".join(filter(None, [topic, text]))
    if file is not None:
        kind = (file.content_type or "text/plain").split(";")[0].strip().lower()
        if file.size > PLAN_MAX_BYTES or not kind.startswith("text/"):
            await interaction.response.send_message(bot_messages.text("RELATED_BAD_FILE", _lang(interaction),
                                                                      kb=PLAN_MAX_BYTES // 1024),
                                                    ephemeral=True, allowed_mentions=NO_MENTIONS)
            return
    if not (body or file or saved):
        await interaction.response.send_message(bot_messages.text("PLAN_NO_INPUT", lang), ephemeral=True,
                                                allowed_mentions=NO_MENTIONS)
        return
    await interaction.response.defer(thinking=True, ephemeral=saved)
    if file is not None:
        try:
            body = (body + "\n" + (await file.read()).decode("utf-8-sig")).strip()
        except UnicodeDecodeError:
            await _private(interaction, bot_messages.text("RELATED_BAD_FILE", _lang(interaction),
                                                          kb=PLAN_MAX_BYTES // 1024))
            return
    if saved:
        papers = await bot.saved_papers(interaction.user.id)
        result = build_plan(messages.text("PLAN_SAVED", lang), [(p, None) for p in papers], day)
    else:
        result = await bot.plan(body, k, day, reach=await interaction_reach(interaction))
    key = new_key()
    bot.remember(key, result)
    files = [("plan.ics", calendar(plan_events(result), name=f"paperbot: {result.query[:60]}").encode("utf-8"))]
    await respond(interaction, [embeds.plan_page(result, 0, lang)], ephemeral=saved,
                  files=files if result.slots else (),
                  view=plan_view(key, result, 0, interaction.user.id, lang))


class PlanPager(Paging, discord.ui.DynamicItem[discord.ui.Button],
                template=r"pb:pl:(?P<dir>[pn]):(?P<key>[0-9a-f]{8}):(?P<page>\d{1,3}):(?P<k>\d{1,2}):(?P<owner>\d{1,20})"):
    """Previous / Next day of a plan, remembered under `key`."""

    prefix = "pb:pl"

    async def run(self, interaction: discord.Interaction) -> None:
        result = bot_of(interaction).recall(self.key)
        if not isinstance(result, Plan):
            await gone(interaction)
            return
        page = min(self.page, embeds.plan_page_count(result) - 1)
        mine = self.mine(interaction)
        owner = self.owner if mine else interaction.user.id
        lang = _lang(interaction, result.query)
        await self.show(interaction, mine, embeds.plan_page(result, page, lang),
                        plan_view(self.key, result, page, owner, lang))


def plan_view(key: str, result: Plan, page: int, owner: int, lang: str = "en") -> discord.ui.View | None:
    return pager_view(PlanPager, key, page, embeds.plan_page_count(result), 1, owner, lang)


# -- /saved ----------------------------------------------------------------------------------------

saved = app_commands.Group(name="saved", description="Your saved papers: list, remove, clear, export.")


async def _saved_page(interaction: discord.Interaction, page: int) -> tuple[embeds.Page, discord.ui.View | None]:
    bot = bot_of(interaction)
    papers = await bot.saved_papers(interaction.user.id)
    lang = _lang(interaction)
    if not papers:
        return embeds.text_pages(bot_messages.text("SAVED_EMPTY", lang))[0], None
    pages = max(1, -(-len(papers) // SAVED_PAGE))
    page = min(max(page, 0), pages - 1)
    shown = embeds.paper_list_page(bot_messages.text("SAVED_HEADING", lang), papers, page, SAVED_PAGE,
                                   lang=lang)
    view = discord.ui.View(timeout=None)
    if pages > 1:
        view.add_item(SavedPager("p", page - 1, disabled=page <= 0, lang=lang))
        view.add_item(SavedPager("n", page + 1, disabled=page >= pages - 1, lang=lang))
    view.add_item(SavedExport("bib", lang))
    view.add_item(SavedExport("ics", lang))
    return shown, view


@saved.command(name="list", description="Your saved papers, page by page.")
@app_commands.check(lookup_limited)
async def saved_list(interaction: discord.Interaction) -> None:
    await interaction.response.defer(thinking=True, ephemeral=True)
    page, view = await _saved_page(interaction, 0)
    await respond(interaction, [page], ephemeral=True, view=view)


@saved.command(name="remove", description="Remove one paper from your saved papers.")
@app_commands.describe(paper="Start typing one of your saved papers")
@app_commands.check(lookup_limited)
async def saved_remove(interaction: discord.Interaction, paper: app_commands.Range[str, 1, 200]) -> None:
    bot = bot_of(interaction)
    lang = _lang(interaction)
    mine = await bot.saved_papers(interaction.user.id)
    record = next((p for p in mine if p.paper_id == paper.strip()), None)
    if record is None:
        choices = autocomplete.paper_choices(mine, paper)
        record = next((p for p in mine if choices and p.paper_id == choices[0][1]), None)
    if record is None or not await bot.unsave_paper(interaction.user.id, record.paper_id):
        await _private(interaction, bot_messages.text("SAVED_NOT_THERE", lang))
        return
    await _private(interaction, bot_messages.text("SAVED_REMOVED", lang, title=embeds.title_of(record)))


async def saved_autocomplete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    papers = await bot_of(interaction).saved_papers(interaction.user.id)
    return [app_commands.Choice(name=name, value=value) for name, value in autocomplete.paper_choices(papers, current)]


@saved.command(name="clear", description="Remove all your saved papers.")
@app_commands.check(lookup_limited)
async def saved_clear(interaction: discord.Interaction) -> None:
    count = await bot_of(interaction).clear_saved(interaction.user.id)
    await _private(interaction, bot_messages.text("SAVED_CLEARED", _lang(interaction), count=count))


@saved.command(name="export", description="Your saved papers as BibTeX or as a calendar of their talks and posters.")
@app_commands.describe(format="bibtex or calendar")
@app_commands.choices(format=FORMATS)
@app_commands.check(lookup_limited)
async def saved_export(interaction: discord.Interaction, format: app_commands.Choice[str]) -> None:
    await export_saved(interaction, format.value)


async def export_saved(interaction: discord.Interaction, fmt: str) -> None:
    """The clicking (or asking) user's saved papers as a .bib or .ics attachment, privately."""
    bot = bot_of(interaction)
    lang = _lang(interaction)
    await interaction.response.defer(thinking=True, ephemeral=True)
    papers = await bot.saved_papers(interaction.user.id)
    if not papers:
        await _private(interaction, bot_messages.text("SAVED_EMPTY", lang))
        return
    if fmt == "ics":
        if not any(p.slots for p in papers):
            await _private(interaction, bot_messages.text("SAVED_NO_SLOTS", lang))
            return
        files = [("saved-papers.ics", calendar_file(papers, bot_messages.text("SAVED_HEADING", lang)))]
        what = "iCalendar (.ics)"
    else:
        files = [("saved-papers.bib", bibtex_file(papers))]
        what = "BibTeX (.bib)"
    await respond(interaction, embeds.text_pages(bot_messages.text("SAVED_EXPORT", lang, count=len(papers), what=what)),
                  ephemeral=True, files=files)


class SavedPager(Persistent, discord.ui.DynamicItem[discord.ui.Button],
                 template=r"pb:sv:(?P<dir>[pn]):(?P<page>\d{1,4})"):
    """Previous / Next through the clicking user's saved papers, read from the users file."""

    def __init__(self, direction: str, page: int, *, disabled: bool = False, lang: str = "en") -> None:
        label = bot_messages.text("PREVIOUS_LABEL" if direction == "p" else "NEXT_LABEL", lang)
        super().__init__(discord.ui.Button(label=label, disabled=disabled,
                                           style=discord.ButtonStyle.secondary,
                                           custom_id=f"pb:sv:{direction}:{max(page, 0)}"))
        self.page = max(page, 0)

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str],
                             /) -> SavedPager:
        return cls(match["dir"], int(match["page"]))

    async def run(self, interaction: discord.Interaction) -> None:
        page, view = await _saved_page(interaction, self.page)
        await interaction.response.edit_message(embeds=[embeds.to_embed(c) for c in page.cards],
                                                content=page.content or None, view=view, allowed_mentions=NO_MENTIONS)


class SavedExport(Persistent, discord.ui.DynamicItem[discord.ui.Button], template=r"pb:svx:(?P<fmt>bib|ics)"):
    def __init__(self, fmt: str, lang: str = "en") -> None:
        label = bot_messages.text("BIBTEX_LABEL" if fmt == "bib" else "CALENDAR_LABEL", lang)
        super().__init__(discord.ui.Button(label=label, style=discord.ButtonStyle.secondary, custom_id=f"pb:svx:{fmt}"))
        self.fmt = fmt

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str],
                             /) -> SavedExport:
        return cls(match["fmt"])

    async def run(self, interaction: discord.Interaction) -> None:
        await export_saved(interaction, self.fmt)


# -- /forget -----------------------------------------------------------------------------------------


@app_commands.command(name="forget",
                      description="Delete everything paperbot keeps about you (saved papers and watches).")
@app_commands.check(lookup_limited)
async def forget(interaction: discord.Interaction) -> None:
    saved_n, watches_n = await bot_of(interaction).forget_user(interaction.user.id)
    await _private(interaction, bot_messages.text("FORGOTTEN", _lang(interaction), saved=saved_n, watches=watches_n))


# -- /watch --------------------------------------------------------------------------------------------

watch = app_commands.Group(name="watch", description="New papers on a topic, sent to you when the index gains them.")


@watch.command(name="add", description="Watch a topic: new matching papers come to you by DM.")
@app_commands.describe(topic="What to watch, e.g. diffusion policies",
                       channel="Post the digests in this channel instead (admins)")
@app_commands.check(lookup_limited)
async def watch_add(interaction: discord.Interaction, topic: app_commands.Range[str, 1, 200],
                    channel: discord.TextChannel | None = None) -> None:
    bot = bot_of(interaction)
    lang = _lang(interaction, topic)
    if channel is not None:
        try:
            admins_only(interaction)
        except app_commands.CheckFailure:
            await _private(interaction, bot_messages.text("WATCH_CHANNEL_ADMINS", lang))
            return
    try:
        added = await bot.add_watch(interaction.user.id, topic, channel.id if channel is not None else "",
                                    str(interaction.guild_id or ""))
    except UserDataError as exc:
        await _private(interaction, markdown.escape(str(exc)))
        return
    where = (bot_messages.text("WATCH_IN_CHANNEL", lang, channel=channel.mention) if channel is not None
             else bot_messages.text("WATCH_BY_DM", lang))
    await _private(interaction, bot_messages.text("WATCH_ADDED", lang, topic=markdown.escape(added.topic), id=added.id,
                                                  where=where, max=bot.watcher.per_digest))


@watch.command(name="list", description="Your watches.")
@app_commands.check(lookup_limited)
async def watch_list(interaction: discord.Interaction) -> None:
    lang = _lang(interaction)
    mine = await bot_of(interaction).watches(interaction.user.id)
    if not mine:
        await _private(interaction, bot_messages.text("WATCH_NONE", lang))
        return
    dm = bot_messages.text("WATCH_DM", lang)
    lines = [bot_messages.text("WATCH_LINE", lang, id=w.id, topic=markdown.escape(w.topic),
                               where=f"<#{w.channel_id}>" if w.channel_id else dm) for w in mine]
    await _private(interaction, f"**{bot_messages.text('WATCH_LIST_HEADING', lang)}**\n" + "\n".join(lines))


@watch.command(name="remove", description="Stop one of your watches.")
@app_commands.describe(watch="Start typing one of your watches")
@app_commands.check(lookup_limited)
async def watch_remove(interaction: discord.Interaction, watch: app_commands.Range[int, 1]) -> None:
    bot = bot_of(interaction)
    lang = _lang(interaction)
    mine = {w.id: w for w in await bot.watches(interaction.user.id)}
    if watch not in mine or not await bot.remove_watch(interaction.user.id, watch):
        await _private(interaction, bot_messages.text("WATCH_NOT_FOUND", lang, id=watch))
        return
    await _private(interaction, bot_messages.text("WATCH_REMOVED", lang, topic=markdown.escape(mine[watch].topic)))


async def watch_autocomplete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[int]]:
    mine = await bot_of(interaction).watches(interaction.user.id)
    needle = current.strip().lower().lstrip("#")
    return [app_commands.Choice(name=markdown.clip(strip_control(f"#{w.id} {w.topic}"), markdown.CHOICE_NAME),
                                value=w.id)
            for w in mine if needle in f"{w.id} {w.topic.lower()}"][:markdown.CHOICES]


def wire_autocomplete() -> None:
    """Attach this module's autocomplete callbacks (bot/app/commands.py `register` calls it)."""
    saved_remove.autocomplete("paper")(saved_autocomplete)
    watch_remove.autocomplete("watch")(watch_autocomplete)


COMMANDS: tuple[app_commands.Command[Any, ..., Any] | app_commands.Group, ...] = (plan, saved, watch, forget)
ITEMS = (PlanPager, SavedPager, SavedExport)
