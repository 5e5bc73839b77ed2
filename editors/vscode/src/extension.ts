// The VS Code extension: starts `oomlint server` over stdio with vscode-languageclient,
// passes the `oomlint.*` settings to it, and shows the memory estimate of a config.
// Everything that can be tested without VS Code lives in settings.ts, serverPath.ts,
// render.ts and selector.ts.

import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { estimateMarkdown, estimatePage, preformatted, SHOW_ESTIMATE_COMMAND } from './render';
import { DOCUMENT_SELECTOR } from './selector';
import { resolveServerPath, systemEnvironment } from './serverPath';
import { configurationChange, initializationOptions, readServerSettings, type ServerSettings } from './settings';

let client: LanguageClient | undefined;
/** Why the server is not running, shown when a command needs it. */
let notRunning = 'The oomlint language server is not running.';
let output: vscode.LogOutputChannel;
let estimatePanel: vscode.WebviewPanel | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('oomlint', { log: true });
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand('oomlint.showMemoryEstimate', showActiveEstimate),
    vscode.commands.registerCommand('oomlint.restartServer', restart),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration('oomlint.path')) {
        await restart();
      } else if (event.affectsConfiguration('oomlint')) {
        await sendSettings();
      }
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await stop();
}

/** The settings for the server; malformed values are reported and left out. */
function currentSettings(): ServerSettings {
  const config = vscode.workspace.getConfiguration('oomlint');
  const { settings, problems } = readServerSettings((key) => config.get(key));
  for (const problem of problems) {
    output.warn(problem);
    void vscode.window.showWarningMessage(problem);
  }
  return settings;
}

async function start(): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const setting = vscode.workspace.getConfiguration('oomlint').get<string>('path');
  const resolution = resolveServerPath(setting, systemEnvironment(folder));
  if (resolution.kind === 'missing') {
    notRunning = resolution.message;
    output.error(resolution.message);
    void vscode.window.showErrorMessage(resolution.message, 'Open Settings').then((choice) => {
      if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'oomlint.path');
      }
    });
    return;
  }
  output.info(`Starting ${resolution.path} server (from ${resolution.from === 'setting' ? 'oomlint.path' : 'PATH'})`);
  const serverOptions: ServerOptions = { command: resolution.path, args: ['server'] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    initializationOptions: () => initializationOptions(currentSettings()),
    outputChannel: output,
    middleware: {
      // The summary code lens runs the server's command; show its answer.
      executeCommand: async (command, args, next) => {
        const answer = await next(command, args);
        if (command === SHOW_ESTIMATE_COMMAND && typeof args[0] === 'string') {
          await showEstimate(answer, vscode.Uri.parse(args[0]));
        }
        return answer;
      },
    },
  };
  client = new LanguageClient('oomlint', 'oomlint', serverOptions, clientOptions);
  try {
    await client.start();
    notRunning = 'The oomlint language server is not running.';
  } catch (error) {
    notRunning = `The oomlint language server (${resolution.path}) failed to start: ${String(error)}`;
    output.error(notRunning);
    void vscode.window.showErrorMessage(notRunning);
  }
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running?.isRunning()) {
    await running.stop();
  }
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

async function sendSettings(): Promise<void> {
  if (client?.isRunning()) {
    await client.sendNotification(DidChangeConfigurationNotification.type, configurationChange(currentSettings()));
  }
}

/** "oomlint: Show memory estimate" on the active editor. */
async function showActiveEstimate(): Promise<void> {
  const document = vscode.window.activeTextEditor?.document;
  if (document === undefined) {
    void vscode.window.showInformationMessage('Open a training config to see its memory estimate.');
    return;
  }
  if (vscode.languages.match(DOCUMENT_SELECTOR, document) === 0) {
    void vscode.window.showInformationMessage(
      `oomlint does not read ${path.basename(document.uri.fsPath)}: it reads YAML, JSON, TOML, .env, shell and Python files.`,
    );
    return;
  }
  if (!client?.isRunning()) {
    void vscode.window.showErrorMessage(notRunning);
    return;
  }
  const answer = await client.sendRequest(ExecuteCommandRequest.type, {
    command: SHOW_ESTIMATE_COMMAND,
    arguments: [client.code2ProtocolConverter.asUri(document.uri)],
  });
  await showEstimate(answer, document.uri);
}

/** Renders the server's answer with VS Code's Markdown renderer in a side panel. */
async function showEstimate(answer: unknown, document: vscode.Uri): Promise<void> {
  const fileName = path.basename(document.fsPath);
  const markdown = estimateMarkdown(answer, fileName);
  let body: string;
  try {
    body = (await vscode.commands.executeCommand<string>('markdown.api.render', markdown)) ?? preformatted(markdown);
  } catch {
    body = preformatted(markdown);
  }
  const title = `Memory: ${fileName}`;
  if (estimatePanel === undefined) {
    estimatePanel = vscode.window.createWebviewPanel('oomlint.estimate', title, {
      viewColumn: vscode.ViewColumn.Beside,
      preserveFocus: true,
    });
    estimatePanel.onDidDispose(() => {
      estimatePanel = undefined;
    });
  }
  estimatePanel.title = title;
  estimatePanel.webview.html = estimatePage(title, body);
  estimatePanel.reveal(vscode.ViewColumn.Beside, true);
}
