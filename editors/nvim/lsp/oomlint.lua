-- Neovim 0.11+: `vim.lsp.enable("oomlint")` picks this up from the runtimepath.
return {
  cmd = { "oomlint", "server" },
  filetypes = { "yaml", "json", "jsonc", "toml", "sh", "bash", "dotenv", "python" },
  root_markers = { "oomlint.toml", ".oomlint.toml", "pyproject.toml", ".git" },
  init_options = { oomlint = {} },
  settings = { oomlint = {} },
}
