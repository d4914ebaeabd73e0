#include "models/connectsnippets.h"

namespace loopscope {

QList<ConnectSnippets::Language> ConnectSnippets::all() {
    return {Language::Python, Language::Node, Language::Curl, Language::LiteLlm,
            Language::AgentsSdk};
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
    }
    return {};
}

std::optional<ConnectSnippets::Language> ConnectSnippets::fromName(const QString &text) {
    for (const Language language : all())
        if (text.compare(name(language), Qt::CaseInsensitive) == 0)
            return language;
    return std::nullopt;
}

QString ConnectSnippets::snippet(Language language, const QUrl &baseUrl, const QString &model) {
    const QString base = baseUrl.toString(QUrl::StripTrailingSlash);
    // The demo model needs no key; a real upstream gets the caller's (or the config's) key.
    QString text;
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
    }
    return text.arg(base, model, prompt());
}

} // namespace loopscope
