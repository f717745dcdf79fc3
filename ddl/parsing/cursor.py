"""A position in one statement's tokens, with the small matching vocabulary the grammar needs.

Words are compared by their upper-cased text rather than sqlglot token types, because MySQL lets
most keywords double as identifiers and sqlglot's token types for keywords differ across releases.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot.tokens import Token, TokenType

from ddl.parsing.dialect import DdlDialect, is_word
from ddl.parsing.statements import (
    DdlSyntaxError,
    QualifiedName,
)
from ddl.parsing.words import (
    BOUNDARY_WORDS,
)

# --- token cursor -----------------------------------------------------------------------------------

STRING_TYPES = frozenset({TokenType.STRING, TokenType.NATIONAL_STRING})


@dataclass
class Cursor:
    """Position in one statement's tokens with the small matching vocabulary the grammar needs."""

    tokens: Sequence[Token]
    sql: str
    dialect: DdlDialect
    i: int = 0
    end_offset: int = field(default=0)

    def __post_init__(self) -> None:
        self.end_offset = self.tokens[-1].end + 1 if self.tokens else 0

    # inspection
    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.tokens[j] if 0 <= j < len(self.tokens) else None

    def word(self, k: int = 0) -> str:
        """Upper-case text of the k-th token if it is a word, else ``""``."""
        token = self.peek(k)
        return token.text.upper() if token is not None and is_word(token) else ""

    def at(self, *words: str) -> bool:
        return all(self.word(k) == w for k, w in enumerate(words))

    def at_type(self, token_type: TokenType, k: int = 0) -> bool:
        token = self.peek(k)
        return token is not None and token.token_type == token_type

    @property
    def done(self) -> bool:
        return self.i >= len(self.tokens)

    @property
    def offset(self) -> int:
        token = self.peek()
        return token.start if token is not None else self.end_offset

    # consumption
    def advance(self) -> Token:
        token = self.peek()
        if token is None:
            raise DdlSyntaxError("unexpected end of statement", self.end_offset)
        self.i += 1
        return token

    def accept(self, *words: str) -> bool:
        if self.at(*words):
            self.i += len(words)
            return True
        return False

    def accept_any(self, words: frozenset[str] | set[str]) -> str | None:
        word = self.word()
        if word and word in words:
            self.i += 1
            return word
        return None

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.error(f"expected {' '.join(words)}")

    def accept_type(self, token_type: TokenType) -> bool:
        if self.at_type(token_type):
            self.i += 1
            return True
        return False

    def expect_type(self, token_type: TokenType, what: str) -> Token:
        if not self.at_type(token_type):
            raise self.error(f"expected {what}")
        return self.advance()

    def accept_equals(self) -> None:
        self.accept_type(TokenType.EQ)

    def error(self, reason: str) -> DdlSyntaxError:
        token = self.peek()
        if token is None:
            return DdlSyntaxError(f"{reason}, found end of statement", self.end_offset)
        return DdlSyntaxError(f"{reason}, found {self.raw(token)!r}", token.start)

    def raw(self, token: Token) -> str:
        return self.sql[token.start : token.end + 1]

    def text_between(self, first: int, last: int) -> str:
        """Original text of tokens[first..last] (inclusive)."""
        return self.sql[self.tokens[first].start : self.tokens[last].end + 1]

    # compound elements
    def identifier(self, what: str = "identifier") -> str:
        token = self.peek()
        if token is None:
            raise self.error(f"expected {what}")
        if token.token_type == TokenType.IDENTIFIER or is_word(token):
            self.i += 1
            return token.text
        if token.token_type == TokenType.STRING and self.raw(token).startswith('"'):
            # Under sql_mode=ANSI_QUOTES "x" is an identifier; accept it where only a name fits.
            self.i += 1
            return token.text
        raise self.error(f"expected {what}")

    def name_or_string(self, what: str) -> str:
        token = self.peek()
        if token is not None and token.token_type in STRING_TYPES:
            self.i += 1
            return token.text
        return self.identifier(what)

    def qualified_name(self, what: str = "table name") -> QualifiedName:
        first = self.identifier(what)
        if self.at_type(TokenType.DOT):
            self.i += 1
            return QualifiedName(first, self.identifier(what))
        return QualifiedName(None, first)

    def string(self, what: str = "string literal") -> str:
        token = self.peek()
        if token is None or token.token_type not in STRING_TYPES:
            raise self.error(f"expected {what}")
        self.i += 1
        # Adjacent literals concatenate ('a' 'b' is 'ab').
        text = token.text
        while self.at_type(TokenType.STRING):
            text += self.advance().text
        return text

    def integer(self, what: str = "number") -> int:
        token = self.peek()
        if token is None or token.token_type != TokenType.NUMBER:
            raise self.error(f"expected {what}")
        self.i += 1
        text = token.text
        try:
            return int(text)
        except ValueError:
            try:
                # FLOAT(7.4)-style or 1e3 lengths: MySQL truncates.
                return int(float(text))
            except (ValueError, OverflowError):
                raise DdlSyntaxError(f"expected {what}, found {text!r}", token.start) from None

    def skip_parenthesized(self) -> tuple[int, int]:
        """Consume ``( ... )`` with nesting; returns the token index range of the inside."""
        open_token = self.expect_type(TokenType.L_PAREN, "'('")
        start = self.i
        depth = 1
        while depth:
            token = self.peek()
            if token is None:
                raise DdlSyntaxError("unbalanced parenthesis", open_token.start)
            if token.token_type == TokenType.L_PAREN:
                depth += 1
            elif token.token_type == TokenType.R_PAREN:
                depth -= 1
            self.i += 1
        return start, self.i - 2

    def skip_expression(self, stop_words: frozenset[str] = frozenset()) -> tuple[int, int]:
        """Consume tokens up to a top-level ``,``/``)``/end or one of ``stop_words``."""
        start = self.i
        while not self.done:
            token = self.peek()
            assert token is not None
            if token.token_type in (TokenType.COMMA, TokenType.R_PAREN):
                break
            if stop_words and self.word() in stop_words:
                break
            if token.token_type == TokenType.L_PAREN:
                self.skip_parenthesized()
            else:
                self.i += 1
        if self.i == start:
            raise self.error("expected an expression")
        return start, self.i - 1

    def skip_rest(self, split_lines: bool = False) -> None:
        """Consume the rest of the statement, checking only that parentheses balance.

        With ``split_lines`` (statements without stored-program bodies) a statement keyword at the
        start of a line ends the statement, for scripts that omit the ``;`` between statements.
        """
        depth = 0
        previous: Token | None = None
        while not self.done:
            token = self.tokens[self.i]
            if (
                split_lines
                and depth == 0
                and previous is not None
                and self.at_boundary()
                and "\n" in self.sql[previous.end + 1 : token.start]
            ):
                break
            if token.token_type == TokenType.L_PAREN:
                depth += 1
            elif token.token_type == TokenType.R_PAREN:
                depth -= 1
                if depth < 0:
                    raise DdlSyntaxError("unbalanced parenthesis", token.start)
            previous = token
            self.i += 1
        if depth:
            raise DdlSyntaxError("unbalanced parenthesis", self.end_offset)

    def at_boundary(self) -> bool:
        """Whether the next tokens start another statement (scripts may omit the ``;``)."""
        word = self.word()
        if word not in BOUNDARY_WORDS:
            return False
        nxt = self.peek(1)
        if nxt is not None and nxt.token_type in (TokenType.L_PAREN, TokenType.DOT, TokenType.EQ):
            return False
        # CREATE TABLE ... REPLACE SELECT is part of the statement, REPLACE INTO starts one.
        return not (word == "REPLACE" and self.word(1) in ("SELECT", "AS", "WITH", ""))

    def at_end(self) -> bool:
        return self.done or self.at_boundary()

    def end_statement(self) -> None:
        if not self.at_end():
            raise self.error("unexpected text after the statement")
