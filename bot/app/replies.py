"""What the Discord bot says, in one place so it can be reviewed and tested.

Text every front end shares (abstention, empty question, errors) is in paperbot/messages.py.
"""

from paperbot.messages import singular_counts

WRITING = "writing…"
NO_MORE_SOURCES = "No other papers were considered for this answer."
SOURCES_NOTE = "Every paper retrieval considered, best first, with its closest sentences."
NO_RESULTS = "No papers found."
FILTERED_BY = "Only papers matching {filters}."
PAPERS_RANGE = "Papers {first}–{last} of {total}"
SHARED_TERMS = "Shared terms: {terms}"
AUTHOR_HEADING = "Papers by {author}"
AREA_HEADING = "Papers in {area}"
SIMILAR_HEADING = "Papers like: {title}"
RELATED_HEADING = "Papers related to your text"
RELATED_EMPTY = "Paste some text (an abstract of your project), or attach a .txt file."
RELATED_BAD_FILE = "Attach a UTF-8 .txt file of at most {kb} KB."
SHARED_BY = "Shared by {user}"
SCHEDULE = "When and where"
TITLE_ZH = "Chinese title"
BIBTEX = "BibTeX"
SAVE_LABEL = "Save"
MORE_SOURCES_LABEL = "More sources"
SHARE_LABEL = "Share in channel"
THREAD_LABEL = "Discuss in thread"
PREVIOUS_LABEL = "Previous"
NEXT_LABEL = "Next"
SAVED_NEW = "Saved {new} of {count} papers; your list has {total}. `/saved list` shows it."
SAVED_HEADING = "Your saved papers"
SAVED_EMPTY = "You have no saved papers yet: press Save under an answer or a paper."
SAVED_REMOVED = "Removed {title} from your saved papers."
SAVED_NOT_THERE = "That paper is not in your saved papers."
SAVED_CLEARED = "Removed your {count} saved papers."
SAVED_EXPORT = "Your {count} saved papers as {what}."
SAVED_NO_SLOTS = "None of your saved papers is in the program, so there is no calendar to export."
BIBTEX_LABEL = "BibTeX"
CALENDAR_LABEL = "Calendar"
FORGOTTEN = "Deleted everything I kept about you: {saved} saved papers and {watches} watches."
PLAN_NO_INPUT = "Give a topic, paste or attach an abstract, or choose `saved` to plan from your saved papers."
PLAN_BAD_DAY = "`day` must be a date such as 2026-12-08."
PLAN_MORE = "…and {more} more slots this day: the calendar file has them all."
PLAN_FOOTER = "day {page}/{pages} · the program's local time · the calendar file has every slot"
WATCH_ADDED = "Watching “{topic}” (#{id}): new matching papers will come {where}, at most {max} at a time."
WATCH_BY_DM = "to you by direct message"
WATCH_IN_CHANNEL = "to {channel}"
WATCH_CHANNEL_ADMINS = "Only server admins can point a watch at a channel; leave `channel` out to get a DM."
WATCH_LIST_HEADING = "Your watches"
WATCH_NONE = "You watch no topics. `/watch add` starts one."
WATCH_LINE = "#{id} · {topic} · {where}"
WATCH_DM = "DM"
WATCH_REMOVED = "Stopped watching “{topic}”."
WATCH_NOT_FOUND = "You have no watch #{id}. `/watch list` shows yours."
DIGEST_TITLE = "New papers for your watch: {topic}"
DIGEST_MORE = "…and {more} more: `/search {topic}`."
DIGEST_FOOTER = "watch #{id} · /watch remove to stop"
RATE_LIMITED = "You're asking faster than I can read. Please try again in {seconds} s."
GUILD_NOT_ALLOWED = "This bot is not enabled on this server."
NOT_ADMIN = "Only server admins (Manage Server permission or the {role} role) can rebuild the index."
NOT_ADMIN_NO_ROLE = "Only server admins (Manage Server permission) can rebuild the index."
LIBRARY_SERVERS_ONLY = "Server libraries live in servers: run `/library` there."
LIBRARY_NOT_EDITOR = "Only members with Manage Server or the {role} role can change this server's library."
LIBRARY_NOT_EDITOR_NO_ROLE = "Only members with Manage Server can change this server's library."
LIBRARY_TOO_LARGE = "{file} is {size}; this server's library takes files of at most {limit}."
LIBRARY_READING = "Reading {file}…"
LIBRARY_EMBEDDING = "{file}: read; {done} of {total} papers embedded{eta}."
LIBRARY_ETA = ", about {seconds} s left"
LIBRARY_ADDED = "{file} is in this server's library: {summary}"
LIBRARY_REFUSED = "{file} was not added, nothing was stored: {problem}"
LIBRARY_INTERRUPTED = ("{file} stopped part-way: the library is restarting. Attach it again in a moment to finish; "
                       "the papers already stored are kept, none twice.")
LIBRARY_STORE_FAILED = "{file} was not added: the library could not store it now (the bot's log says why)."
LIBRARY_NOT_DOWNLOADED = "{file} was not added: Discord did not hand over the file; attach it again."
LIBRARY_BUSY = "Another ingest is running; try again when it has finished."
LIBRARY_EMPTY = "This server's library is empty. `/library add` adds a paper list (any format `paperbot ingest` reads)."
LIBRARY_HEADING = "This server's library"
LIBRARY_LINE = "**{file}** · {papers} papers · added by {user} on {day}"
LIBRARY_IN_DMS_ON = "This server's library is searched from DMs of its members too."
LIBRARY_IN_DMS_OFF = "This server's library is searched in this server only."
LIBRARY_REMOVED = "Removed {file} from this server's library ({papers} papers)."
LIBRARY_NOT_THERE = "This server's library has no upload named {file}."
REINDEX_RUNNING = "An index rebuild is already running; I'll post its result here when it finishes."
REINDEX_RUNNING_ELSEWHERE = "An index rebuild is already running. Please try again when it has finished."
REINDEX_SERVERS_ONLY = "`/reindex` works in servers only, where admins can run it."
REINDEX_DONE = "Index rebuilt: {summary}"
PAPER_NOT_FOUND = "No paper matches {query}. Start typing a label or id and pick one from the list."
STORE_UNAVAILABLE = "The paper store can't be reached right now. Please try again in a minute."
STORE_RESTARTING = "The library is restarting. Please try again in a moment."
ALREADY_SHARED = "This answer is already in the channel."
RESULT_GONE = "This result is too old for me to rebuild. Please ask again."
THREAD_NAME = "Follow-up questions"
THREAD_STARTED = "Thread started: {thread}. Ask your follow-up questions there."
THREAD_EXISTS = "There is already a thread for this answer: {thread}."
THREAD_FORBIDDEN = "I'm not allowed to start threads in this channel."
THREAD_SERVERS_ONLY = "Threads can only be started from answers in a server channel."
THREAD_INTRO = ("Ask follow-up questions here and mention me or reply to one of my answers: \"[2]\", "
                "\"compare 1 and 3\", \"which of these uses GRPO?\", \"and for vision models?\".")
EMPTY_MESSAGE = "That message has no text for me to answer."
SOURCES_FOR = "Sources for: {question}"
PAGE_FOOTER = "page {page}/{pages}"
# The fields of /paper.
FIELD_AUTHORS = "Authors"
FIELD_TYPE = "Type"
FIELD_AREA = "Area"
FIELD_KEYWORDS = "Keywords"
FIELD_VENUE = "Venue"
FIELD_LINKS = "Links"
FIELD_DETAILS = "Details"
CONTEXT_MENU = "Ask paperbot"
ABOUT_TITLE = "paperbot"
ABOUT_INTRO = "I answer questions about NeurIPS 2026 paper abstracts, quoting the sentences I rely on."
ABOUT_NO_LLM = "not configured (answers are the verbatim best sentences)"
ABOUT_USAGE = ("`/ask` a question (add `private` to see the answer alone), `/search` for papers, "
               "`/paper` for a whole abstract; both take `author`, `area`, `type`, `track` and `keyword` filters. "
               "`/author` and `/area` list papers, `/similar` finds papers like one, `/related` papers like your "
               "own abstract. You can also DM me a question or @mention me in a channel; reply to an answer (or use "
               "its thread) to follow up, and right-click a message → Apps → Ask paperbot.")
TOKEN_MISSING = """\
paperbot: DISCORD_TOKEN is not set.

To run the bot you need a Discord application with a bot user:
  1. Open https://discord.com/developers/applications and click "New Application".
  2. In "Bot", click "Reset Token" and copy the token.
  3. Put it in .env (next to where you run paperbot) as DISCORD_TOKEN=<token>,
     or export DISCORD_TOKEN in the environment.
  4. Invite the bot with the scopes "bot applications.commands" and the permissions
     View Channels, Send Messages, Embed Links, Read Message History (permissions=84992):
     https://discord.com/oauth2/authorize?client_id=<APPLICATION_ID>&scope=bot+applications.commands&permissions=84992
See docs/discord.md for details."""
TOKEN_MALFORMED = """\
paperbot: DISCORD_TOKEN does not look like a bot token.

A bot token has three dot-separated parts (for example MTIz....Gh1x3Q.abc...); copy it from
https://discord.com/developers/applications → your application → Bot → Reset Token.
Do not use the application id, the public key or the client secret. See docs/discord.md."""
LOGIN_FAILED = """\
paperbot: Discord rejected DISCORD_TOKEN (it was reset or revoked).

Create a new one at https://discord.com/developers/applications → your application → Bot → Reset Token,
and put it in .env as DISCORD_TOKEN=<token>. See docs/discord.md."""
RESTARTING = "paperbot is restarting. Please ask again in a minute."
DISCORD_UNREACHABLE = ("paperbot: cannot reach Discord ({reason}); check this machine's network, DNS and proxy "
                       "(a container needs a network other than none), then start it again.")

# Slash commands in Chinese (Discord shows them to clients set to zh-CN or zh-TW), keyed by the English text
# of each command name, description, option name and option description (bot/app/command_names.py).
COMMANDS_ZH = {
    "ask": "提问",
    "Ask a question; the answer quotes the abstracts it relies on.": "提问；回答会引用它所依据的摘要原文。",
    "question": "问题",
    "Your question about the papers": "关于论文的问题",
    "private": "私密",
    "Only you see the answer (default: no)": "只有你能看到回答（默认：否）",
    "llm": "语言模型",
    "Let the language model summarize, when one is configured (default: yes)": "在已配置时由语言模型总结（默认：是）",
    "search": "搜索",
    "Find papers for a query (title, score, snippet, link).": "按查询查找论文（标题、分数、摘录、链接）。",
    "query": "查询",
    "What to look for": "要查找的内容",
    "k": "数量",
    "Papers per page (default 5)": "每页论文数（默认 5）",
    "paper": "论文",
    "The whole abstract of one paper.": "一篇论文的完整摘要。",
    "Start typing a label or id": "输入标签或编号",
    "about": "关于",
    "What this bot knows and how to use it.": "这个机器人知道什么，以及如何使用它。",
    "reindex": "重建索引",
    "Rebuild the paper index from the corpus (admins).": "从语料重建论文索引（仅管理员）。",
    "Start typing a title or id": "输入标题或编号",
    "author": "作者",
    "The papers of one author.": "一位作者的论文。",
    "Start typing a name (accents and case ignored)": "输入姓名（不区分大小写和重音）",
    "Only papers with this author (accents and case ignored)": "只看这位作者的论文（不区分大小写和重音）",
    "area": "领域",
    "The papers of one area, page by page.": "一个领域的论文，分页显示。",
    "Start typing an area or subarea": "输入领域或子领域",
    "Only papers in this area or subarea": "只看这个领域或子领域的论文",
    "type": "类型",
    "Only orals, spotlights or posters": "只看口头报告、焦点报告或海报",
    "track": "分会",
    "Only papers of this track": "只看这个分会的论文",
    "keyword": "关键词",
    "Only papers with this keyword": "只看带有这个关键词的论文",
    "similar": "相似论文",
    "Papers like one paper, with the key terms they share.": "与某篇论文相似的论文，附共同的关键词。",
    "related": "相关论文",
    "Papers closest to a text, e.g. your own project's abstract.": "与一段文字最接近的论文，例如你自己项目的摘要。",
    "text": "文本",
    "Paste an abstract": "粘贴一段摘要",
    "file": "文件",
    "…or attach it as a .txt file": "……或以 .txt 文件附上",
    "Ask paperbot": "问 paperbot",
    "plan": "日程",
    "Your plan for the week: the matching papers' talks and posters in time order, with a calendar file.":
        "本周日程：匹配论文的报告和海报，按时间排序，附日历文件。",
    "topic": "主题",
    "A topic, e.g. preference optimization": "主题，例如 preference optimization",
    "Paste an abstract instead of a topic": "粘贴一段摘要代替主题",
    "saved": "收藏",
    "Plan from your saved papers": "按你收藏的论文安排日程",
    "day": "日期",
    "Only this day (YYYY-MM-DD, the program's local date)": "只看这一天（YYYY-MM-DD，会议当地日期）",
    "Papers to plan for (default 10)": "安排的论文数（默认 10）",
    "Your saved papers: list, remove, clear, export.": "你收藏的论文：查看、移除、清空、导出。",
    "list": "查看",
    "Your saved papers, page by page.": "你收藏的论文，分页显示。",
    "remove": "移除",
    "Remove one paper from your saved papers.": "从收藏中移除一篇论文。",
    "Start typing one of your saved papers": "输入你收藏的某篇论文",
    "clear": "清空",
    "Remove all your saved papers.": "移除你收藏的所有论文。",
    "export": "导出",
    "Your saved papers as BibTeX or as a calendar of their talks and posters.": "以 BibTeX 或日历（报告和海报）导出你收藏的论文。",
    "format": "格式",
    "bibtex or calendar": "bibtex 或日历",
    "forget": "删除我的数据",
    "Delete everything paperbot keeps about you (saved papers and watches).": "删除 paperbot 保存的关于你的一切（收藏和订阅）。",
    "watch": "订阅",
    "New papers on a topic, sent to you when the index gains them.": "某个主题的新论文，在索引收录时发送给你。",
    "add": "添加",
    "Watch a topic: new matching papers come to you by DM.": "订阅一个主题：新的匹配论文通过私信发给你。",
    "What to watch, e.g. diffusion policies": "要订阅的内容，例如 diffusion policies",
    "channel": "频道",
    "Post the digests in this channel instead (admins)": "改为发到这个频道（仅管理员）",
    "Your watches.": "你的订阅。",
    "Stop one of your watches.": "停止你的某个订阅。",
    "Start typing one of your watches": "输入你的某个订阅",
    "library": "文库",
    "This server's own papers: add, list, remove.": "本服务器自己的论文：添加、列出、移除。",
    "Add a paper list (JSON, JSONL, CSV or text) to this server's library.": "把论文列表（JSON、JSONL、CSV 或文本）加入本服务器的文库。",
    "A paper list in any format `paperbot ingest` reads": "`paperbot ingest` 能读取的任何格式的论文列表",
    "The papers this server has added, who added them and when.": "本服务器加入的论文，由谁、何时加入。",
    "Remove one upload and its papers from this server's library.": "从本服务器的文库中移除一次上传及其论文。",
    "source": "来源",
    "Start typing the name of an upload": "输入某次上传的名称",
    "dms": "私信",
    "Whether members' DMs with the bot search this server's library too.": "成员与机器人的私信是否也搜索本服务器的文库。",
    "allowed": "允许",
    "Search this library from members' DMs (default: no)": "在成员的私信中搜索这个文库（默认：否）",
}

ZH = {
    "WRITING": "正在撰写…",
    "NO_MORE_SOURCES": "这个回答没有参考其他论文。",
    "SOURCES_NOTE": "检索考虑过的每篇论文，按相关度排序，附最接近的句子。",
    "NO_RESULTS": "没有找到论文。",
    "STORE_UNAVAILABLE": "暂时无法访问论文库，请一分钟后再试。",
    "STORE_RESTARTING": "论文库正在重启，请稍后再试。",
    "ALREADY_SHARED": "这个回答已经在频道里了。",
    "SCHEDULE": "时间与地点",
    "TITLE_ZH": "中文标题",
    "BIBTEX": "BibTeX 引用",
    "SAVE_LABEL": "收藏",
    "MORE_SOURCES_LABEL": "更多来源",
    "SHARE_LABEL": "分享到频道",
    "THREAD_LABEL": "在子区讨论",
    "PREVIOUS_LABEL": "上一页",
    "NEXT_LABEL": "下一页",
    "SAVED_NEW": "已收藏 {count} 篇中的 {new} 篇；你的列表共 {total} 篇。`/saved list` 可查看。",
    "SAVED_HEADING": "你收藏的论文",
    "SAVED_EMPTY": "你还没有收藏论文：在回答或论文下点“收藏”。",
    "SAVED_REMOVED": "已从收藏中移除 {title}。",
    "SAVED_NOT_THERE": "这篇论文不在你的收藏中。",
    "SAVED_CLEARED": "已移除你收藏的 {count} 篇论文。",
    "SAVED_EXPORT": "你收藏的 {count} 篇论文，格式：{what}。",
    "SAVED_NO_SLOTS": "你收藏的论文都不在日程中，没有可导出的日历。",
    "FORGOTTEN": "已删除我保存的关于你的一切：{saved} 篇收藏论文和 {watches} 个订阅。",
    "PLAN_NO_INPUT": "请给出主题、粘贴或附上摘要，或选择 `saved` 按收藏的论文安排日程。",
    "PLAN_BAD_DAY": "`day` 必须是日期，例如 2026-12-08。",
    "PLAN_MORE": "……这一天还有 {more} 个时段：日历文件包含全部。",
    "PLAN_FOOTER": "第 {page}/{pages} 天 · 会议当地时间 · 日历文件包含所有时段",
    "WATCH_ADDED": "正在订阅“{topic}”（#{id}）：新的匹配论文将发送{where}，每次最多 {max} 篇。",
    "WATCH_BY_DM": "到你的私信",
    "WATCH_IN_CHANNEL": "到 {channel}",
    "WATCH_CHANNEL_ADMINS": "只有服务器管理员可以把订阅发到频道；不填 `channel` 则通过私信接收。",
    "WATCH_LIST_HEADING": "你的订阅",
    "WATCH_NONE": "你没有订阅任何主题。用 `/watch add` 开始订阅。",
    "WATCH_DM": "私信",
    "WATCH_REMOVED": "已停止订阅“{topic}”。",
    "WATCH_NOT_FOUND": "你没有 #{id} 号订阅。`/watch list` 可查看你的订阅。",
    "DIGEST_TITLE": "你订阅的新论文：{topic}",
    "DIGEST_MORE": "……还有 {more} 篇：`/search {topic}`。",
    "DIGEST_FOOTER": "订阅 #{id} · 用 /watch remove 停止",
    "RESTARTING": "paperbot 正在重启，请一分钟后再问。",
    "SOURCES_FOR": "来源：{question}",
    "PAGE_FOOTER": "第 {page}/{pages} 页",
    "FIELD_AUTHORS": "作者",
    "FIELD_TYPE": "类型",
    "FIELD_AREA": "领域",
    "FIELD_KEYWORDS": "关键词",
    "FIELD_VENUE": "会议",
    "FIELD_LINKS": "链接",
    "FIELD_DETAILS": "出处",
    "FILTERED_BY": "只看符合 {filters} 的论文。",
    "PAPERS_RANGE": "第 {first}–{last} 篇，共 {total} 篇",
    "SHARED_TERMS": "共同的关键词：{terms}",
    "AUTHOR_HEADING": "{author} 的论文",
    "AREA_HEADING": "{area} 领域的论文",
    "SIMILAR_HEADING": "与之相似的论文：{title}",
    "RELATED_HEADING": "与你的文字相关的论文",
    "RELATED_EMPTY": "请粘贴一段文字（例如你项目的摘要），或附上一个 .txt 文件。",
    "RELATED_BAD_FILE": "请附上不超过 {kb} KB 的 UTF-8 .txt 文件。",
    "SHARED_BY": "由 {user} 分享",
    "BIBTEX_LABEL": "BibTeX",
    "CALENDAR_LABEL": "日历",
    "WATCH_LINE": "#{id} · {topic} · {where}",
    "RATE_LIMITED": "你提问太快了，我来不及读。请 {seconds} 秒后再试。",
    "GUILD_NOT_ALLOWED": "这个机器人没有在本服务器启用。",
    "NOT_ADMIN": "只有服务器管理员（拥有“管理服务器”权限或 {role} 身份组）可以重建索引。",
    "NOT_ADMIN_NO_ROLE": "只有服务器管理员（拥有“管理服务器”权限）可以重建索引。",
    "LIBRARY_SERVERS_ONLY": "服务器文库只存在于服务器中：请在服务器里使用 `/library`。",
    "LIBRARY_NOT_EDITOR": "只有拥有“管理服务器”权限或 {role} 身份组的成员可以修改本服务器的文库。",
    "LIBRARY_NOT_EDITOR_NO_ROLE": "只有拥有“管理服务器”权限的成员可以修改本服务器的文库。",
    "LIBRARY_TOO_LARGE": "{file} 大小为 {size}；本服务器的文库只接受不超过 {limit} 的文件。",
    "LIBRARY_READING": "正在读取 {file}…",
    "LIBRARY_EMBEDDING": "{file}：已读取；已嵌入 {total} 篇论文中的 {done} 篇{eta}。",
    "LIBRARY_ETA": "，大约还需 {seconds} 秒",
    "LIBRARY_ADDED": "{file} 已加入本服务器的文库：{summary}",
    "LIBRARY_REFUSED": "{file} 未被加入，没有存储任何内容：{problem}",
    "LIBRARY_INTERRUPTED": "{file} 中途停止：论文库正在重启。请稍后重新附上它以完成导入；已存储的论文会保留，不会重复。",
    "LIBRARY_STORE_FAILED": "{file} 未被加入：论文库现在无法存储它（机器人的日志写明了原因）。",
    "LIBRARY_NOT_DOWNLOADED": "{file} 未被加入：Discord 没有交出这个文件，请重新附上。",
    "LIBRARY_BUSY": "另一个导入正在进行；请等它完成后再试。",
    "LIBRARY_EMPTY": "本服务器的文库是空的。`/library add` 可以加入论文列表（`paperbot ingest` 能读的任何格式）。",
    "LIBRARY_HEADING": "本服务器的文库",
    "LIBRARY_LINE": "**{file}** · {papers} 篇论文 · 由 {user} 于 {day} 加入",
    "LIBRARY_IN_DMS_ON": "本服务器的文库也会在成员的私信中被搜索。",
    "LIBRARY_IN_DMS_OFF": "本服务器的文库只在本服务器中被搜索。",
    "LIBRARY_REMOVED": "已从本服务器的文库中移除 {file}（{papers} 篇论文）。",
    "LIBRARY_NOT_THERE": "本服务器的文库中没有名为 {file} 的上传。",
    "REINDEX_RUNNING": "索引正在重建；完成后我会把结果发在这里。",
    "REINDEX_RUNNING_ELSEWHERE": "索引正在重建，请等它完成后再试。",
    "REINDEX_SERVERS_ONLY": "`/reindex` 只能在服务器中由管理员运行。",
    "REINDEX_DONE": "索引已重建：{summary}",
    "PAPER_NOT_FOUND": "没有论文匹配 {query}。请输入标签或编号，并从列表中选择。",
    "RESULT_GONE": "这个结果太旧了，我无法重建。请重新提问。",
    "THREAD_NAME": "后续问题",
    "THREAD_STARTED": "已创建子区：{thread}。请在那里继续提问。",
    "THREAD_EXISTS": "这个回答已经有子区了：{thread}。",
    "THREAD_FORBIDDEN": "我没有在这个频道创建子区的权限。",
    "THREAD_SERVERS_ONLY": "只能从服务器频道中的回答创建子区。",
    "THREAD_INTRO": ("在这里继续提问，并提及我或回复我的某个回答：“[2]”、“比较 1 和 3”、“其中哪篇用了 GRPO？”、"
                     "“那视觉模型呢？”。"),
    "EMPTY_MESSAGE": "这条消息没有可以回答的文字。",
    "ABOUT_INTRO": "我回答关于 NeurIPS 2026 论文摘要的问题，并引用我所依据的原句。",
    "ABOUT_NO_LLM": "未配置（回答是原文中最相关的句子）",
    "ABOUT_USAGE": ("用 `/ask` 提问（加 `private` 只有你能看到回答），`/search` 查找论文，`/paper` 查看完整摘要；"
                    "都可以用 `author`、`area`、`type`、`track` 和 `keyword` 筛选。`/author` 和 `/area` 列出论文，"
                    "`/similar` 查找相似论文，`/related` 查找与你自己的摘要相近的论文。也可以私信我提问，或在频道里 @我；"
                    "回复某个回答（或在它的子区里）继续追问，右键消息 → Apps → 问 paperbot。"),
}


def text(name: str, lang: str = "en", **fields) -> str:
    """The Discord message `name` in `lang` (English when there is no translation), with `fields` filled in."""
    template = {"zh": ZH}.get(lang, {}).get(name) or singular_counts(globals()[name], fields)
    return template.format(**fields) if fields else template
