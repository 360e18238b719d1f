-- Test harness, not part of a recipe (tests/test_editor_recipes.py): wait until the current buffer has
-- diagnostics, write them as JSON to $ZL_OUT, quit. Runs on Neovim 0.7+.
-- ZL_FIXALL=1: then ask for the source.fixAll.zerolint code action the way docs/editors.md says, wait until it
-- changed the buffer, and add the buffer's text (and the titles of any menu the editor showed) to the result.
-- ZL_SECOND=FILE: then open FILE too, wait for its diagnostics, and add how many clients are running.
local out = os.getenv("ZL_OUT")
local timeout = tonumber(os.getenv("ZL_TIMEOUT_MS") or "30000")
local ok = vim.wait(timeout, function()
  return #vim.diagnostic.get(0) > 0
end, 50)
local result = { version = vim.version(), filetype = vim.bo.filetype, clients = {}, diagnostics = {} }
for _, client in pairs(vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = 0 }) or vim.lsp.buf_get_clients(0)) do
  table.insert(result.clients, client.name)
end
if not ok then
  result.error = "timeout: no diagnostics after " .. timeout .. " ms"
end
for _, d in ipairs(vim.diagnostic.get(0)) do
  local lsp = (d.user_data or {}).lsp or {}
  table.insert(result.diagnostics, {
    lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
    code = d.code or lsp.code, source = d.source, message = d.message, severity = d.severity,
  })
end
if ok and os.getenv("ZL_FIXALL") == "1" then
  result.menu = {}
  vim.ui.select = function(items, opts, on_choice)  -- 0.7 lists the actions it got: take the first
    for _, item in ipairs(items) do
      table.insert(result.menu, opts.format_item and opts.format_item(item) or vim.inspect(item))
    end
    on_choice(items[1], 1)
  end
  local tick = vim.b.changedtick
  if vim.fn.has("nvim-0.8") == 1 then
    vim.lsp.buf.code_action({ context = { only = { "source.fixAll.zerolint" } }, apply = true })
  else
    vim.lsp.buf.code_action({ only = { "source.fixAll.zerolint" } })
  end
  if vim.wait(timeout, function() return vim.b.changedtick ~= tick end, 50) then
    result.fixed = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n") .. "\n"
  else
    result.error = "timeout: the fix-all action did not change the buffer after " .. timeout .. " ms"
  end
end
local second = os.getenv("ZL_SECOND")
if ok and second and second ~= "" then
  vim.cmd("edit " .. vim.fn.fnameescape(second))
  if vim.wait(timeout, function() return #vim.diagnostic.get(0) > 0 end, 50) then
    result.second_diagnostics = #vim.diagnostic.get(0)
    result.running = #(vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients())
  else
    result.error = "timeout: no diagnostics in " .. second .. " after " .. timeout .. " ms"
  end
end
local f = assert(io.open(out, "w"))
f:write(vim.fn.json_encode(result))
f:close()
vim.cmd("qa!")
