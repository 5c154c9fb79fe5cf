"""Text rules that several tokenizers share."""

# Whitespace as Hugging Face `tokenizers` sees it (Rust's
# `char::is_whitespace`, the Unicode White_Space property), in RE2 syntax
# (tf.strings.regex_replace): one character.
WHITESPACE = r"[\t\n\x0b\x0c\r\x{85}\p{Z}]"
