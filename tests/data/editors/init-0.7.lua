-- zerolint server for Neovim 0.7 (vim.lsp.start is 0.8+): docs/editors.md, "## Neovim".
-- One client per root directory, started on the first JSON/YAML buffer and attached to the others.
local clients = {}

local function root_dir(path)
  local dir = vim.fn.fnamemodify(path, ":p:h")
  while true do
    for _, marker in ipairs({ "pyproject.toml", ".zerolint.toml", ".git" }) do
      if vim.loop.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return vim.fn.fnamemodify(path, ":p:h")
    end
    dir = parent
  end
end

vim.api.nvim_create_autocmd("FileType", {
  pattern = { "json", "jsonc", "yaml", "hjson" },
  callback = function(args)
    local root = root_dir(vim.api.nvim_buf_get_name(args.buf))
    local id = clients[root]
    if not id or vim.lsp.client_is_stopped(id) then
      id = vim.lsp.start_client({
        name = "zerolint",
        cmd = { "zerolint", "server" },
        root_dir = root,
      })
      clients[root] = id
    end
    if id then
      vim.lsp.buf_attach_client(args.buf, id)
    end
  end,
})
