#include "models/connectsnippets.h"

namespace loopscope {

QList<ConnectSnippets::Language> ConnectSnippets::all() {
    return {Language::Python,    Language::Node,         Language::Curl,       Language::LiteLlm,
            Language::AgentsSdk, Language::AnthropicSdk, Language::ClaudeCode, Language::Codex};
}

QString ConnectSnippets::title(Language language) {
    switch (language) {
    case Language::Python:
        return QStringLiteral("Python");
    case Language::Node:
        return QStringLiteral("Node");
    case Language::Curl:
        return QStringLiteral("curl");
    case Language::LiteLlm:
        return QStringLiteral("LiteLLM");
    case Language::AgentsSdk:
        return QStringLiteral("Agents SDK");
    case Language::AnthropicSdk:
        return QStringLiteral("Anthropic SDK");
    case Language::ClaudeCode:
        return QStringLiteral("Claude Code");
    case Language::Codex:
        return QStringLiteral("Codex CLI");
    }
    return {};
}

QString ConnectSnippets::name(Language language) {
    switch (language) {
    case Language::Python:
        return QStringLiteral("python");
    case Language::Node:
        return QStringLiteral("node");
    case Language::Curl:
        return QStringLiteral("curl");
    case Language::LiteLlm:
        return QStringLiteral("litellm");
    case Language::AgentsSdk:
        return QStringLiteral("agents");
    case Language::AnthropicSdk:
        return QStringLiteral("anthropic");
    case Language::ClaudeCode:
        return QStringLiteral("claude-code");
    case Language::Codex:
        return QStringLiteral("codex");
    }
    return {};
}

std::optional<ConnectSnippets::Language> ConnectSnippets::fromName(const QString &text) {
    for (const Language language : all())
        if (text.compare(name(language), Qt::CaseInsensitive) == 0)
            return language;
    return std::nullopt;
}

QString ConnectSnippets::names() {
    QStringList out;
    for (const Language language : all())
        out << name(language);
    return out.join(QStringLiteral(", "));
}

QString ConnectSnippets::snippet(Language language, const QUrl &baseUrl, const QString &model) {
    const QString base = baseUrl.toString(QUrl::StripTrailingSlash);
    // Anthropic's SDK and Claude Code take the server's root and add /v1/messages themselves.
    const QString root = base.endsWith(QLatin1String("/v1")) ? base.chopped(3) : base;
    // The demo model needs no key; a real upstream gets the caller's (or the config's) key.
    QString text;
    QString shownModel = model; // what %2 names
    switch (language) {
    case Language::Python:
        text = QStringLiteral(
            "# pip install openai\n"
            "# or without code changes: export OPENAI_BASE_URL=%1\n"
            "import os\n"
            "from openai import OpenAI\n"
            "\n"
            "client = OpenAI(base_url=\"%1\", api_key=os.environ.get(\"OPENAI_API_KEY\", "
            "\"sk-anything\"))\n"
            "response = client.responses.create(\n"
            "    model=\"%2\",\n"
            "    tools=[{\"type\": \"code_interpreter\", \"container\": {\"type\": \"auto\"}}],\n"
            "    input=\"%3\",\n"
            ")\n"
            "for item in response.output:\n"
            "    if item.type == \"code_interpreter_call\":\n"
            "        print(\"ran:\", item.code)\n"
            "print(response.output_text)\n");
        break;
    case Language::Node:
        text = QStringLiteral(
            "// npm install openai   (save as loop.mjs, run: node loop.mjs)\n"
            "// or without code changes: export OPENAI_BASE_URL=%1\n"
            "import OpenAI from \"openai\";\n"
            "\n"
            "const client = new OpenAI({\n"
            "  baseURL: \"%1\",\n"
            "  apiKey: process.env.OPENAI_API_KEY ?? \"sk-anything\",\n"
            "});\n"
            "const response = await client.responses.create({\n"
            "  model: \"%2\",\n"
            "  tools: [{ type: \"code_interpreter\", container: { type: \"auto\" } }],\n"
            "  input: \"%3\",\n"
            "});\n"
            "for (const item of response.output)\n"
            "  if (item.type === \"code_interpreter_call\") console.log(\"ran:\", item.code);\n"
            "console.log(response.output_text);\n");
        break;
    case Language::Curl:
        text = QStringLiteral(
            "curl %1/responses \\\n"
            "  -H \"Content-Type: application/json\" \\\n"
            "  -H \"Authorization: Bearer ${OPENAI_API_KEY:-sk-anything}\" \\\n"
            "  -d '{\n"
            "    \"model\": \"%2\",\n"
            "    \"tools\": [{\"type\": \"code_interpreter\", \"container\": {\"type\": "
            "\"auto\"}}],\n"
            "    \"input\": \"%3\"\n"
            "  }'\n");
        break;
    case Language::LiteLlm:
        text = QStringLiteral(
            "# pip install litellm\n"
            "import os\n"
            "import litellm\n"
            "\n"
            "response = litellm.responses(\n"
            "    model=\"openai/%2\",  # openai/: any OpenAI-compatible server\n"
            "    api_base=\"%1\",\n"
            "    api_key=os.environ.get(\"OPENAI_API_KEY\", \"sk-anything\"),\n"
            "    tools=[{\"type\": \"code_interpreter\", \"container\": {\"type\": \"auto\"}}],\n"
            "    input=\"%3\",\n"
            ")\n"
            "for item in response.output:\n"
            "    if item.type == \"code_interpreter_call\":\n"
            "        print(\"ran:\", item.code)\n"
            "print(response.output_text)\n");
        break;
    case Language::AgentsSdk:
        text = QStringLiteral(
            "# pip install openai-agents\n"
            "import os\n"
            "from openai import AsyncOpenAI\n"
            "from agents import (Agent, CodeInterpreterTool, Runner, set_default_openai_client,\n"
            "                    set_tracing_disabled)\n"
            "\n"
            "set_default_openai_client(AsyncOpenAI(\n"
            "    base_url=\"%1\", api_key=os.environ.get(\"OPENAI_API_KEY\", \"sk-anything\")))\n"
            "set_tracing_disabled(True)  # traces would go to api.openai.com\n"
            "agent = Agent(\n"
            "    name=\"calculator\",\n"
            "    model=\"%2\",\n"
            "    tools=[CodeInterpreterTool(tool_config={\"type\": \"code_interpreter\",\n"
            "                                            \"container\": {\"type\": \"auto\"}})],\n"
            ")\n"
            "result = Runner.run_sync(agent, \"%3\")\n"
            "print(result.final_output)\n");
        break;
    case Language::AnthropicSdk:
        text = QStringLiteral(
            "// npm install @anthropic-ai/sdk   (save as ask.mjs, run: node ask.mjs)\n"
            "// or without code changes: export ANTHROPIC_BASE_URL=%4\n"
            "import Anthropic from \"@anthropic-ai/sdk\";\n"
            "\n"
            "// Your key is forwarded to the upstream as you sent it; Loopscope stores it masked.\n"
            "const client = new Anthropic({\n"
            "  baseURL: \"%4\",\n"
            "  apiKey: process.env.ANTHROPIC_API_KEY ?? \"sk-ant-anything\",\n"
            "});\n"
            "const message = await client.messages.create({\n"
            "  model: \"%2\",\n"
            "  max_tokens: 1024,\n"
            "  messages: [{ role: \"user\", content: \"%3\" }],\n"
            "});\n"
            "for (const block of message.content)\n"
            "  if (block.type === \"text\") console.log(block.text);\n");
        break;
    case Language::ClaudeCode:
        // The demo model cannot drive Claude Code's tools (it would call the first tool it is
        // offered), so the demo's snippet names a Claude model and the Anthropic upstream.
        text =
            QStringLiteral(
                "# npm install -g @anthropic-ai/claude-code\n"
                "# Every request Claude Code makes goes through Loopscope (your key is forwarded "
                "to\n"
                "# the upstream as sent and stored masked); each session shows as one run.\n") +
            (model == demoModel()
                 ? QStringLiteral("# Start Loopscope with a Claude upstream first:\n"
                                  "#   loopscope --anthropic-upstream https://api.anthropic.com\n")
                 : QString()) +
            QStringLiteral("export ANTHROPIC_BASE_URL=%4\n"
                           "export ANTHROPIC_API_KEY=\"${ANTHROPIC_API_KEY:?your Anthropic key}\"\n"
                           "claude --model %2 -p \"%3\"\n");
        if (model == demoModel())
            shownModel = QStringLiteral("claude-sonnet-4-5");
        break;
    case Language::Codex:
        text =
            QStringLiteral("# npm install -g @openai/codex\n"
                           "# ~/.codex/config.toml: a model provider whose base_url is Loopscope\n"
                           "model = \"%2\"\n"
                           "model_provider = \"loopscope\"\n"
                           "\n"
                           "[model_providers.loopscope]\n"
                           "name = \"Loopscope\"\n"
                           "base_url = \"%1\"\n"
                           "env_key = \"OPENAI_API_KEY\"\n"
                           "wire_api = \"responses\"\n"
                           "\n"
                           "# then, in a shell (each session shows as one run):\n"
                           "#   export OPENAI_API_KEY=\"${OPENAI_API_KEY:-sk-anything}\"\n"
                           "#   codex exec \"%3\"\n");
        break;
    }
    // One pass over %1..%4 (QString::arg would renumber a text that leaves one out).
    const QString values[4] = {base, shownModel, prompt(), root};
    QString out;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text.at(i);
        if (c == u'%' && i + 1 < text.size() && text.at(i + 1) >= u'1' && text.at(i + 1) <= u'4') {
            out += values[text.at(i + 1).unicode() - u'1'];
            ++i;
        } else {
            out += c;
        }
    }
    return out;
}

} // namespace loopscope
