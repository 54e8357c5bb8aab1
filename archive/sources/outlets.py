"""News agencies and outlets a closing line may name as an article's source.

A short last line such as "Reuters" or "-- BBC News" is a sign-off, but so, in shape, are a
rugby referee ("P O'Brien (New Zealand)") and a results table's last row ("WINNERS (once)").
Only a line naming a known outlet becomes the source; an archive of other outlets extends the
list (``archive index --source-name``). The list holds the wire agencies of the world's press
and the large broadcasters and papers whose copy circulates in archives.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

KNOWN_OUTLETS: frozenset[str] = frozenset(name.lower() for name in (
    # wire and national news agencies
    "Reuters", "Thomson Reuters", "AP", "Associated Press", "The Associated Press", "AFP",
    "Agence France-Presse", "Agence France Presse", "Bloomberg", "Bloomberg News", "UPI",
    "United Press International", "dpa", "Deutsche Presse-Agentur", "ANSA", "EFE", "Kyodo",
    "Kyodo News", "Jiji", "Jiji Press", "Xinhua", "TASS", "ITAR-TASS", "RIA Novosti", "Interfax",
    "PA", "PA Media", "Press Association", "The Canadian Press", "Canadian Press", "AAP",
    "Australian Associated Press", "NZPA", "PTI", "Press Trust of India", "IANS", "ANI",
    "Yonhap", "Anadolu", "Anadolu Agency", "IRNA", "MENA", "WAFA", "KUNA", "WAM", "QNA", "SPA",
    "Petra", "SANA", "Bernama", "Antara", "PNA", "VNA", "CNA", "Lusa", "Europa Press", "Belga",
    "ANP", "NTB", "TT", "Ritzau", "STT", "CTK", "PAP", "MTI", "HINA", "Tanjug", "BTA",
    "Agerpres", "ATS", "APA", "Prensa Latina", "Notimex", "Agencia Brasil", "Dow Jones",
    "Dow Jones Newswires", "Market News International", "Knight Ridder", "McClatchy",
    # broadcasters
    "BBC", "BBC News", "BBC Sport", "BBC World Service", "ITV News", "Sky News", "Channel 4 News",
    "CNN", "NPR", "PBS", "ABC", "ABC News", "NBC News", "CBS News", "Fox News", "CBC",
    "CBC News", "Al Jazeera", "Deutsche Welle", "DW", "France 24", "RFI", "Euronews", "RTE",
    "RTÉ", "VOA", "Voice of America", "Radio Free Europe", "RFE/RL", "NHK", "CCTV", "SABC",
    # papers and sites
    "The Guardian", "Guardian", "The Observer", "The Times", "The Sunday Times",
    "The Independent", "The Telegraph", "The Daily Telegraph", "Financial Times", "FT",
    "The Economist", "Daily Mail", "The Scotsman", "The Irish Times", "The New York Times",
    "New York Times", "The Washington Post", "Washington Post", "The Wall Street Journal",
    "Wall Street Journal", "WSJ", "USA Today", "Los Angeles Times", "Chicago Tribune",
    "The Boston Globe", "Politico", "Axios", "MarketWatch", "Forbes", "Fortune", "Time",
    "Newsweek", "Le Monde", "Der Spiegel", "El País", "Corriere della Sera", "The Hindu",
    "The Times of India", "Hindustan Times", "South China Morning Post", "The Straits Times",
    "The Japan Times", "Haaretz", "The Jerusalem Post", "Gulf News", "The National",
    "Arab News", "The Sydney Morning Herald", "The Age", "The Globe and Mail", "Toronto Star",
))

_DECORATION = re.compile(r"^[\s\-\u2013\u2014(©]*(?:copyright\s+)?|[\s)\-\u2013\u2014.]*$", re.I)
_JOINED = re.compile(r"\s*(?:/|,|&|\band\b)\s*", re.I)


def signoff_source(line: str, extra: Iterable[str] = ()) -> str | None:
    """The outlet a closing line names ("-- Reuters", "(AP)", "Reuters/AFP"), or None.

    Every name in a joined line must be known, so "Smith and Jones" stays in the body."""
    name = _DECORATION.sub("", line.strip())
    known = KNOWN_OUTLETS | {e.strip().lower() for e in extra if e.strip()}
    parts = [p for p in _JOINED.split(name) if p]
    if parts and all(p.lower() in known for p in parts):
        return name
    return None
