-- Headless Neovim test of editors/nvim with the real `oomlint server`.
-- A Lua error does not change headless Neovim's exit status, so the verdict goes to the
-- file named by $OOMLINT_VERDICT ("ok", or "fail" and the reason) and run.sh checks it.

local verdict = assert(os.getenv("OOMLINT_VERDICT"), "OOMLINT_VERDICT is not set")

local function finish(ok, message)
  local file = io.open(verdict, "w")
  file:write((ok and "ok" or "fail") .. "\n" .. tostring(message or "") .. "\n")
  file:close()
  vim.cmd(ok and "qa!" or "cq")
end

local function request(method, params)
  local responses = vim.lsp.buf_request_sync(0, method, params, 20000) or {}
  for _, response in pairs(responses) do
    if response.result ~= nil then
      return response.result
    end
    assert(not response.error, method .. ": " .. vim.inspect(response.error))
  end
end

local function find_code(code)
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.code == code then
      return d
    end
  end
end

local function run()
  require("oomlint").setup({ cmd = { assert(os.getenv("OOMLINT_BIN")), "server" }, gpu = "A10G" })
  vim.bo.filetype = "yaml" -- `-u NONE` turns filetype detection off; this attaches the client.

  assert(vim.wait(20000, function() return find_code("OOM601") ~= nil end, 50), "no OOM601 diagnostic: "
    .. vim.inspect(vim.diagnostic.get(0)))
  local exceeds = find_code("OOM601")
  assert(exceeds.source == "oomlint", "source: " .. tostring(exceeds.source))
  assert(exceeds.message:find("exceeds the 22.18 GiB of the A10G", 1, true), exceeds.message)
  local line = exceeds.lnum -- 0-based: the key most responsible (here the model: weights, optimizer)

  local batch_line
  for i, text in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    if text:find("^per_device_train_batch_size:") then
      batch_line = i
    end
  end
  assert(batch_line, "no per_device_train_batch_size line")
  vim.api.nvim_win_set_cursor(0, { batch_line, 3 })
  local hover = request("textDocument/hover", vim.lsp.util.make_position_params())
  assert(hover and hover.contents.kind == "markdown", "no hover")
  assert(hover.contents.value:find("**`per_device_train_batch_size`**", 1, true), hover.contents.value)
  assert(hover.contents.value:find("| optimizer | %d+%.%d%d | `█"), hover.contents.value)

  local lenses = request("textDocument/codeLens", { textDocument = vim.lsp.util.make_text_document_params() })
  assert(lenses and lenses[1].command.title:find("GiB of 22.2 GiB on A10G — does not fit", 1, true),
    vim.inspect(lenses))

  -- "Disable ... for this line", applied like a user would, silences the finding.
  vim.api.nvim_win_set_cursor(0, { line + 1, 0 })
  local params = vim.lsp.util.make_range_params()
  params.context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(0, line) }
  local actions = request("textDocument/codeAction", params)
  local disable
  for _, action in ipairs(actions or {}) do
    if action.title == "Disable exceeds-gpu-memory (OOM601) for this line" then
      disable = action
    end
  end
  assert(disable, "no disable action: " .. vim.inspect(actions))
  vim.lsp.util.apply_workspace_edit(disable.edit, "utf-16")
  assert(vim.api.nvim_buf_get_lines(0, line, line + 1, false)[1] == "# oomlint: ignore[OOM601]",
    "edit not applied")
  assert(vim.wait(20000, function() return find_code("OOM601") == nil end, 50), "OOM601 still reported")
  -- Gone because the server published the edited text's findings, not because it stopped
  -- (a client that exits clears its diagnostics).
  local running = false
  for _, client in pairs((vim.lsp.get_clients or vim.lsp.get_active_clients)()) do
    running = running or client.name == "oomlint"
  end
  assert(running, "the oomlint client is no longer running")
end

local ok, err = pcall(run)
finish(ok, err)
