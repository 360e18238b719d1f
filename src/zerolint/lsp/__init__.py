"""`zerolint server`: a language server (LSP over stdio) for DeepSpeed configs in any editor.

The pure parts need no LSP library: `positions` (character offsets <-> LSP's UTF-16 positions), `detect` (which
documents are DeepSpeed configs), `lint` (the pipeline in-process, settings per document), `cursor` (what the
cursor is on, even in half-typed text) and `schema_help` (hover and completion from the generated schemas).
`convert` turns those into LSP types and `server` wires them to pygls; only those two import lsprotocol/pygls
(the `lsp` extra), and only `zerolint server` imports them.
"""
