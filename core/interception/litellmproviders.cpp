#include "interception/litellmproviders.h"

namespace loopscope {

namespace {

using Wire = LiteLlmProvider::Wire;

// Defaults and variables as LiteLLM resolves them (`api_base or get_secret(<BASE>) or <default>`,
// `api_key or get_secret(<KEY>)`); `source` names the LiteLLM file that does it. Two deliberate
// differences: openai/ and azure/ read no environment variables (a client SDK's OPENAI_BASE_URL
// in the same shell must not send Loopscope to itself; without api_key the client's own key is
// forwarded), and Ollama is reached through its OpenAI-compatible /v1 rather than /api/chat.
QList<LiteLlmProvider> buildTable() {
    const QString core = QStringLiteral("litellm/litellm_core_utils/get_llm_provider_logic.py");
    const auto openAi = [](const char *name, const char *base, QStringList baseEnv,
                           QStringList keyEnv, QString source, bool v1 = false) {
        LiteLlmProvider p;
        p.name = QString::fromLatin1(name);
        p.wire = Wire::OpenAi;
        p.defaultApiBase = QString::fromLatin1(base);
        p.apiBaseEnv = std::move(baseEnv);
        p.apiKeyEnv = std::move(keyEnv);
        p.bareHostGetsV1 = v1;
        p.source = std::move(source);
        return p;
    };
    const auto own = [](const char *name) {
        LiteLlmProvider p;
        p.name = QString::fromLatin1(name);
        p.source = QStringLiteral("own wire format in LiteLLM (litellm/llms/%1)").arg(p.name);
        return p;
    };
    const auto s = [](const char *text) { return QString::fromLatin1(text); };
    using L = QStringList;

    QList<LiteLlmProvider> table;
    table << openAi("openai", "https://api.openai.com/v1", {}, {},
                    s("OpenAI API reference; env deliberately not read (see above)"));
    LiteLlmProvider azure;
    azure.name = QStringLiteral("azure");
    azure.wire = Wire::Azure;
    azure.apiBaseEnv = L{s("AZURE_API_BASE")};
    azure.source = s("litellm/llms/azure (AZURE_API_BASE); the key is api_key or the client's");
    table << azure;
    LiteLlmProvider anthropic;
    anthropic.name = QStringLiteral("anthropic");
    anthropic.wire = Wire::Anthropic;
    anthropic.defaultApiBase = QStringLiteral("https://api.anthropic.com");
    anthropic.apiBaseEnv = L{s("ANTHROPIC_API_BASE"), s("ANTHROPIC_BASE_URL")};
    anthropic.apiKeyEnv = L{s("ANTHROPIC_API_KEY")};
    anthropic.source =
        s("litellm/llms/anthropic/chat/transformation.py (api_base without /v1, x-api-key)");
    table << anthropic;
    LiteLlmProvider demo;
    demo.name = QStringLiteral("loopscope");
    demo.wire = Wire::Demo;
    demo.source = s("Loopscope's built-in scripted model");
    table << demo;

    table << openAi("hosted_vllm", "", L{s("HOSTED_VLLM_API_BASE")}, L{s("HOSTED_VLLM_API_KEY")},
                    s("litellm/llms/hosted_vllm/chat/transformation.py (no default api_base)"),
                    true)
          << openAi("ollama_chat", "http://localhost:11434", L{s("OLLAMA_API_BASE")},
                    L{s("OLLAMA_API_KEY")},
                    s("litellm/llms/ollama (http://localhost:11434), via Ollama's /v1"), true)
          << openAi("ollama", "http://localhost:11434", L{s("OLLAMA_API_BASE")},
                    L{s("OLLAMA_API_KEY")}, core + s(" (ollama), via Ollama's /v1"), true)
          << openAi("lm_studio", "", L{s("LM_STUDIO_API_BASE")}, L{s("LM_STUDIO_API_KEY")},
                    s("litellm/llms/lm_studio/chat/transformation.py (no default api_base)"))
          << openAi("llamafile", "http://127.0.0.1:8080/v1", L{s("LLAMAFILE_API_BASE")},
                    L{s("LLAMAFILE_API_KEY")}, s("litellm/llms/llamafile/chat/transformation.py"))
          << openAi("openrouter", "https://openrouter.ai/api/v1", L{s("OPENROUTER_API_BASE")},
                    L{s("OPENROUTER_API_KEY"), s("OR_API_KEY")},
                    s("litellm/llms/openrouter/common_utils.py, litellm/main.py"))
          << openAi("together_ai", "https://api.together.xyz/v1", L{s("TOGETHER_AI_API_BASE")},
                    L{s("TOGETHER_API_KEY"), s("TOGETHER_AI_API_KEY"), s("TOGETHERAI_API_KEY"),
                      s("TOGETHER_AI_TOKEN")},
                    core)
          << openAi("groq", "https://api.groq.com/openai/v1", L{s("GROQ_API_BASE")},
                    L{s("GROQ_API_KEY")}, s("litellm/llms/groq/chat/transformation.py"))
          << openAi("deepseek", "https://api.deepseek.com/beta", L{s("DEEPSEEK_API_BASE")},
                    L{s("DEEPSEEK_API_KEY")}, core)
          << openAi("fireworks_ai", "https://api.fireworks.ai/inference/v1",
                    L{s("FIREWORKS_API_BASE")},
                    L{s("FIREWORKS_API_KEY"), s("FIREWORKS_AI_API_KEY"), s("FIREWORKSAI_API_KEY"),
                      s("FIREWORKS_AI_TOKEN")},
                    s("litellm/llms/fireworks_ai/chat/transformation.py"))
          << openAi("xai", "https://api.x.ai/v1", L{s("XAI_API_BASE")}, L{s("XAI_API_KEY")},
                    s("litellm/llms/xai (XAI_API_BASE constant)"))
          << openAi("mistral", "https://api.mistral.ai/v1", L{s("MISTRAL_AZURE_API_BASE")},
                    L{s("MISTRAL_AZURE_API_KEY"), s("MISTRAL_API_KEY")},
                    s("litellm/llms/mistral/chat/transformation.py (adds /v1)"), true)
          << openAi("codestral", "https://codestral.mistral.ai/v1", L{s("CODESTRAL_API_BASE")},
                    L{s("CODESTRAL_API_KEY")}, core)
          << openAi("deepinfra", "https://api.deepinfra.com/v1/openai", L{s("DEEPINFRA_API_BASE")},
                    L{s("DEEPINFRA_API_KEY")}, s("litellm/llms/deepinfra/chat/transformation.py"))
          << openAi("cerebras", "https://api.cerebras.ai/v1", L{s("CEREBRAS_API_BASE")},
                    L{s("CEREBRAS_API_KEY")}, core)
          << openAi("perplexity", "https://api.perplexity.ai", L{s("PERPLEXITY_API_BASE")},
                    L{s("PERPLEXITYAI_API_KEY"), s("PERPLEXITY_API_KEY")},
                    s("litellm/llms/perplexity/chat/transformation.py"))
          << openAi("nvidia_nim", "https://integrate.api.nvidia.com/v1",
                    L{s("NVIDIA_NIM_API_BASE")}, L{s("NVIDIA_NIM_API_KEY")}, core)
          << openAi("sambanova", "https://api.sambanova.ai/v1", L{s("SAMBANOVA_API_BASE")},
                    L{s("SAMBANOVA_API_KEY")}, core)
          << openAi("meta_llama", "https://api.llama.com/compat/v1", L{s("LLAMA_API_BASE")},
                    L{s("LLAMA_API_KEY")}, core)
          << openAi("github", "https://models.inference.ai.azure.com", L{s("GITHUB_API_BASE")},
                    L{s("GITHUB_API_KEY")}, core)
          << openAi("litellm_proxy", "", L{s("LITELLM_PROXY_API_BASE")},
                    L{s("LITELLM_PROXY_API_KEY")}, core + s(" (no default api_base)"))
          << openAi("openai_like", "", L{s("OPENAI_LIKE_API_BASE")}, L{s("OPENAI_LIKE_API_KEY")},
                    s("litellm/llms/openai_like/chat/transformation.py (no default api_base)"))
          << openAi("custom_openai", "", {}, {},
                    s("LiteLLM custom_openai: api_base names the server"))
          // OpenAI-compatible, but no default Loopscope could vouch for: api_base required.
          << openAi("moonshot", "", L{s("MOONSHOT_API_BASE")}, {}, s("api_base required"))
          << openAi("dashscope", "", L{s("DASHSCOPE_API_BASE")}, {}, s("api_base required"))
          << openAi("databricks", "", L{s("DATABRICKS_API_BASE")}, {}, s("api_base required"));

    // Chat Completions only, by their own API references: no /responses to try.
    for (LiteLlmProvider &p : table)
        for (const char *name :
             {"deepseek", "cerebras", "mistral", "codestral", "perplexity", "sambanova",
              "deepinfra", "llamafile", "nvidia_nim", "meta_llama", "github"})
            if (p.name == QLatin1String(name))
                p.chatOnly = true;
    // Ollama's /v1/responses is stateless (and older Ollama has none: detected, then bridged).
    for (LiteLlmProvider &p : table)
        if (p.name == QLatin1String("ollama") || p.name == QLatin1String("ollama_chat"))
            p.statelessResponses = true;

    for (const char *name :
         {"bedrock", "bedrock_converse", "sagemaker", "vertex_ai", "vertex_ai_beta", "gemini",
          "cohere", "cohere_chat", "azure_ai", "huggingface", "replicate", "watsonx", "cloudflare",
          "vllm", "text-completion-openai", "ai21", "voyage", "palm"})
        table << own(name);
    return table;
}

} // namespace

const QList<LiteLlmProvider> &LiteLlmProviders::all() {
    static const QList<LiteLlmProvider> table = buildTable();
    return table;
}

const LiteLlmProvider *LiteLlmProviders::find(const QString &name) {
    for (const LiteLlmProvider &provider : all()) {
        if (provider.name == name)
            return &provider;
    }
    return nullptr;
}

QStringList LiteLlmProviders::names() {
    QStringList out;
    for (const LiteLlmProvider &provider : all())
        out << provider.name;
    return out;
}

QStringList LiteLlmProviders::routableNames() {
    QStringList out;
    for (const LiteLlmProvider &provider : all()) {
        if (provider.routable())
            out << provider.name;
    }
    return out;
}

} // namespace loopscope
