-- zerolint server for Neovim 0.11+ (vim.lsp.config / vim.lsp.enable): docs/editors.md, "## Neovim".
vim.lsp.config("zerolint", {
  cmd = { "zerolint", "server" },
  filetypes = { "json", "jsonc", "yaml", "hjson" },
  root_markers = { "pyproject.toml", ".zerolint.toml", ".git" },
})
vim.lsp.enable("zerolint")
