-- zerolint server for Neovim 0.8 to 0.10 (vim.lsp.start; it reuses a running client with the same name and
-- root_dir): docs/editors.md, "## Neovim".
vim.api.nvim_create_autocmd("FileType", {
  pattern = { "json", "jsonc", "yaml", "hjson" },
  callback = function(args)
    local marker = vim.fs.find({ "pyproject.toml", ".zerolint.toml", ".git" },
                               { upward = true, path = vim.fs.dirname(vim.api.nvim_buf_get_name(args.buf)) })[1]
    vim.lsp.start({
      name = "zerolint",
      cmd = { "zerolint", "server" },
      root_dir = vim.fs.dirname(marker or vim.api.nvim_buf_get_name(args.buf)),
    })
  end,
})
