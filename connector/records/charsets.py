"""Text columns of the binlog decoded the way the server converts them to utf8mb4.

``binlog_encoding(charset)`` names the Python codec a column's bytes are decoded with: UTF-8 for the
utf8 family, else a decode-only codec ``mysqlcdc-<charset>`` registered with Python's codec search
the first time a table needs one.
"""

from __future__ import annotations

import codecs
import functools
from typing import Any

# The binlog carries text as raw bytes in the column's character set, and mysql-replication decodes
# them with its own idea of the Python codec (latin1 as strict cp1252, utf16 with the wrong byte
# order, no codec at all for dec8/swe7/...; a strict decode error would stop the stream). The
# snapshot gets the server's own conversion to utf8mb4. So the reader installs, per text column, a
# codec registered here that decodes exactly as the server converts.
#
# Single-byte character sets: a Python base codec plus the bytes where the server's conversion
# differs (derived from MariaDB 10.11: SELECT CONVERT(UNHEX('xx') USING cs) for every byte; bytes
# the server cannot map come out as '?'). ASCII-based ones list their upper half (0x80-0xFF).
_SINGLE_BYTE_OVERRIDES: dict[str, tuple[str, dict[int, str]]] = {
    "latin1": ("cp1252", {0x81: "\x81", 0x8D: "\x8d", 0x8F: "\x8f", 0x90: "\x90", 0x9D: "\x9d"}),
    "cp850": ("cp850", {}),
    "hp8": ("hp_roman8", {}),
    "koi8r": ("koi8_r", {}),
    "latin2": ("iso8859_2", {}),
    "ascii": ("ascii", {}),
    "hebrew": ("iso8859_8", {0xAF: "\u203e"}),
    "tis620": ("tis_620", {b: "\ufffd" for b in (0xA0, 0xDB, 0xDC, 0xDD, 0xDE, 0xFC, 0xFD, 0xFE, 0xFF)}),
    "koi8u": ("koi8_u", {0x95: "\u2022"}),
    "greek": ("iso8859_7", {0xA1: "\u02bd", 0xA2: "\u02bc", 0xA4: "?", 0xA5: "?", 0xAA: "?"}),
    "cp1250": ("cp1250", {}),
    "latin5": ("iso8859_9", {}),
    "cp866": ("cp866", {0xFC: "\u207f", 0xFD: "\xb2"}),
    "macce": ("mac_latin2", {}),
    "macroman": ("mac_roman", {}),
    "cp852": ("cp852", {}),
    "latin7": ("iso8859_13", {}),
    "cp1251": ("cp1251", {}),
    "cp1256": ("cp1256", {b: "?" for b in (0x8A, 0x8F, 0x98, 0x9A, 0x9F, 0xAA, 0xC0, 0xFF)}),
    "cp1257": ("cp1257", {}),
    "swe7": (
        "ascii",
        {
            0x40: "\xc9",
            0x5B: "\xc4",
            0x5C: "\xd6",
            0x5D: "\xc5",
            0x5E: "\xdc",
            0x60: "\xe9",
            0x7B: "\xe4",
            0x7C: "\xf6",
            0x7D: "\xe5",
            0x7E: "\xfc",
            0x7F: "?",
        },
    ),
}
_UPPER_HALVES: dict[str, str] = {
    "dec8": (
        "\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94"
        "\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f\xa0¡¢£?¥?§¤©ª«????°±²³?µ¶·?¹º»¼½?¿ÀÁÂÃÄÅ"
        "ÆÇÈÉÊËÌÍÎÏ?ÑÒÓÔÕÖŒØÙÚÛÜŸ?ßàáâãäåæçèéêëìíîï?ñòóôõöœøùúûüÿ??"
    ),
    "armscii8": (
        "\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93"
        "\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f\xa0❁§։)(»«—.՝,-՟…՜՛՞ԱաԲբԳգԴդԵեԶզԷէԸը"
        "ԹթԺժԻիԼլԽխԾծԿկՀհՁձՂղՃճՄմՅյՆնՇշՈոՉչՊպՋջՌռՍսՎվՏտՐրՑցՒւՓփՔքՕօՖֆ’'"
    ),
    "keybcs2": (
        "ČüéďäĎŤčěĚĹÍľĺÄÁÉžŽôöÓůÚýÖÜŠĽÝŘťáíóúňŇŮÔšřŕŔ¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤"
        "╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\xa0"
    ),
    "geostd8": (
        "€?‚?„…†‡?‰?‹?????‘’“”•–—???›????\xa0¡¢£¤¥¦§¨©ª«¬\xad®¯°±²³´µ¶·¸¹º»¼½¾¿აბგდევზჱთიკლმნ"
        "ჲოპჟრსტჳუფქღყშჩცძწჭხჴჯჰჵ???????????????????????№??"
    ),
    "swe7": "?" * 128,
}
# Multi-byte character sets: the Python codec (Java decodes malformed input to U+FFFD, so do we).
_MULTI_BYTE_CODECS: dict[str, str] = {
    "utf8mb4": "utf-8",
    "utf8mb3": "utf-8",
    "utf8": "utf-8",
    "big5": "big5",
    "ujis": "euc_jp",
    "sjis": "shift_jis",
    "cp932": "cp932",
    "eucjpms": "euc_jp",
    "euckr": "euc_kr",
    "gb2312": "gb2312",
    "gbk": "gbk",
    "gb18030": "gb18030",
    "ucs2": "utf-16-be",
    "utf16": "utf-16-be",
    "utf16le": "utf-16-le",
    "utf32": "utf-32-be",
}
_CODEC_PREFIX = "mysqlcdc-"


def _decoding_table(charset: str) -> str:
    base, overrides = _SINGLE_BYTE_OVERRIDES.get(charset, ("ascii", {}))
    table = [bytes((b,)).decode(base, errors="replace").replace("\ufffd", "?") for b in range(256)]
    for index, char in enumerate(_UPPER_HALVES.get(charset, "")):
        table[0x80 + index] = char
    for byte, char in overrides.items():
        table[byte] = char
    return "".join(table)


def _codec_for(name: str) -> codecs.CodecInfo | None:
    """Codec search function for ``mysqlcdc-<mysql charset>`` names (see ``binlog_encoding``)."""
    if not name.startswith(_CODEC_PREFIX.replace("-", "_")) and not name.startswith(_CODEC_PREFIX):
        return None
    charset = name[len(_CODEC_PREFIX) :]
    if charset in _MULTI_BYTE_CODECS:
        target = _MULTI_BYTE_CODECS[charset]

        def decode_multi(data: Any, errors: str = "strict", /) -> tuple[str, int]:
            return codecs.decode(bytes(data), target, "replace"), len(data)

        decode = decode_multi
    elif charset in _SINGLE_BYTE_OVERRIDES or charset in _UPPER_HALVES:
        table = _decoding_table(charset)

        def decode_single(data: Any, errors: str = "strict", /) -> tuple[str, int]:
            return codecs.charmap_decode(data, "strict", table)

        decode = decode_single
    else:
        return None

    def encode(text: str, errors: str = "strict", /) -> tuple[bytes, int]:
        raise UnicodeError(f"{name} is a decode-only codec")

    return codecs.CodecInfo(encode, decode, name=name)


@functools.cache
def _register_codecs() -> None:
    """Adds ``_codec_for`` to Python's codec search once, when the first table needs one of its
    codecs (not at import: importing the module should not change the process's codec registry)."""
    codecs.register(_codec_for)


def binlog_encoding(charset: str | None) -> str:
    """The registered codec that decodes a MySQL character set the way the server converts it
    (UTF-8 when the charset is unknown or missing, as Debezium does)."""
    key = (charset or "utf8mb4").lower()
    if _MULTI_BYTE_CODECS.get(key) == "utf-8":
        return "utf-8"  # the common case: Python's C decoder (MySQL rejects invalid UTF-8 input)
    if key in _MULTI_BYTE_CODECS or key in _SINGLE_BYTE_OVERRIDES or key in _UPPER_HALVES:
        _register_codecs()
        return _CODEC_PREFIX + key
    return "utf-8"
