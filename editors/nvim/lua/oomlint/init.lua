-- oomlint for Neovim: starts `oomlint server` for training configs.
--
--   require("oomlint").setup({ gpu = "A10G" })
--
-- Works from Neovim 0.7 (vim.lsp.start_client) through 0.11+ (vim.lsp.config and
-- vim.lsp.enable); the API is chosen by feature detection, not by version number.

local M = {}

M.defaults = {
  cmd = { "oomlint", "server" },
  filetypes = { "yaml", "json", "jsonc", "toml", "sh", "bash", "dotenv", "python" },
  root_markers = { "oomlint.toml", ".oomlint.toml", "pyproject.toml", ".git" },
  -- Server settings, sent as `initializationOptions` and `workspace/didChangeConfiguration`:
  gpu = nil, -- a GPU name ("A10G", "A100 80GB") or "auto"
  headroom = nil, -- share of the GPU to keep free, e.g. 0.1
  select = nil, -- rule codes, prefixes or names to report
  ignore = nil, -- rule codes, prefixes or names to skip
  -- Refresh the summary code lens ("≈ 17.2 GiB of 22.0 GiB on A10G — fits") as you type.
  codelens = true,
}

local function settings(opts)
  return { oomlint = { gpu = opts.gpu, headroom = opts.headroom, select = opts.select, ignore = opts.ignore } }
end

local function root_dir(bufnr, markers)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = vim.fn.fnamemodify(name, ":p:h")
  if vim.fs and vim.fs.find then
    local found = vim.fs.find(markers, { path = dir, upward = true })[1]
    if found then
      return vim.fn.fnamemodify(found, ":h")
    end
  end
  return dir
end

local function refresh_codelens(bufnr)
  vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "TextChanged" }, {
    buffer = bufnr,
    callback = function()
      pcall(vim.lsp.codelens.refresh)
    end,
  })
  pcall(vim.lsp.codelens.refresh)
end

--- The client configuration for `opts` (also what nvim-lspconfig or vim.lsp.config take).
function M.config(opts)
  opts = vim.tbl_extend("force", M.defaults, opts or {})
  local on_attach = opts.on_attach
  return {
    name = "oomlint",
    cmd = opts.cmd,
    filetypes = opts.filetypes,
    root_markers = opts.root_markers,
    init_options = settings(opts),
    settings = settings(opts),
    on_attach = function(client, bufnr)
      if opts.codelens then
        refresh_codelens(bufnr)
      end
      if on_attach then
        on_attach(client, bufnr)
      end
    end,
  }
end

-- Neovim 0.7: one client, attached to each buffer of a configured filetype.
local function start_legacy(config, markers)
  local client_id
  vim.api.nvim_create_autocmd("FileType", {
    pattern = config.filetypes,
    callback = function(args)
      local bufnr = args.buf
      if not client_id or not vim.lsp.get_client_by_id(client_id) then
        config.root_dir = root_dir(bufnr, markers)
        client_id = vim.lsp.start_client(config)
      end
      if client_id then
        vim.lsp.buf_attach_client(bufnr, client_id)
      end
    end,
  })
end

function M.setup(opts)
  local config = M.config(opts)
  local markers = config.root_markers
  if vim.lsp.config and vim.lsp.enable then
    vim.lsp.config("oomlint", config)
    vim.lsp.enable("oomlint")
  elseif vim.lsp.start then
    vim.api.nvim_create_autocmd("FileType", {
      pattern = config.filetypes,
      callback = function(args)
        vim.lsp.start(vim.tbl_extend("force", config, { root_dir = root_dir(args.buf, markers) }), { bufnr = args.buf })
      end,
    })
  else
    start_legacy(config, markers)
  end
end

return M
