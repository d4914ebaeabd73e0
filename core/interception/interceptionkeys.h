#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QLatin1String>
#include <QList>
#include <QString>

#include <optional>

// Keys, prefixes and small predicates shared by the interception hooks and the agentic loop
// (spec §2.1, §3.1, §3.2). Every string here is part of LiteLLM's contract: do not rename.
namespace loopscope::keys {

// --- the generated function tool ---
inline constexpr QLatin1String kCodeExecutionToolName("litellm_code_execution");
inline constexpr QLatin1String
    kCodeExecutionToolDescription("Execute python code in a sandbox and return stdout.");
inline constexpr QLatin1String kNativeCodeInterpreterType("code_interpreter");

// --- server-side markers (request root, mirrored into litellm_metadata) ---
inline constexpr QLatin1String kActive("_code_interpreter_interception_active");
inline constexpr QLatin1String kSandboxKey("_code_interpreter_interception_sandbox_key");
inline constexpr QLatin1String kSessionScoped("_code_interpreter_interception_session_scoped");
inline constexpr QLatin1String kConvertedStream("_code_interpreter_interception_converted_stream");
inline constexpr QLatin1String kStreamOptionsStash("_code_interpreter_interception_stream_options");
inline constexpr QLatin1String kLitellmMetadata("litellm_metadata");

// --- interception prefixes ---
inline constexpr QLatin1String kCodeInterpreterPrefix("_code_interpreter_interception");
inline constexpr QLatin1String kWebsearchPrefix("_websearch_interception");
inline constexpr QLatin1String kCompressionPrefix("_compression_interception");
inline constexpr QLatin1String kHeadroomPrefix("_headroom_interception");

// Converted-stream flags and stream_options stashes of the sibling interceptors.
inline constexpr QLatin1String
    kWebsearchConvertedStream("_websearch_interception_converted_stream");
inline constexpr QLatin1String kHeadroomConvertedStream("_headroom_interception_converted_stream");
inline constexpr QLatin1String
    kCompressionConvertedStream("_compression_interception_converted_stream");
inline constexpr QLatin1String kWebsearchStreamOptions("_websearch_interception_stream_options");
inline constexpr QLatin1String kHeadroomStreamOptions("_headroom_interception_stream_options");
inline constexpr QLatin1String
    kWebsearchEmitNativeBlocks("_websearch_interception_emit_native_blocks");

// --- agentic loop controls ---
inline constexpr QLatin1String kAgenticLoopPrefix("_agentic_loop");
inline constexpr QLatin1String kAgenticLoopDepth("_agentic_loop_depth");
inline constexpr QLatin1String kAgenticLoopFingerprints("_agentic_loop_fingerprints");
inline constexpr QLatin1String kAgenticLoopApiSurface("_agentic_loop_api_surface");
inline constexpr QLatin1String kMaxAgenticLoops("max_agentic_loops");
inline constexpr int kDefaultMaxAgenticLoops = 3;

// --- API surfaces (value of _agentic_loop_api_surface) ---
inline constexpr QLatin1String kChatCompletionsSurface("chat_completions");
inline constexpr QLatin1String kResponsesSurface("responses");
inline constexpr QLatin1String kAnthropicMessagesSurface("anthropic_messages");

// --- exact strings fed back to the model ---
inline constexpr QLatin1String kExecutionErrorPrefix("[execution error] ");
inline constexpr QLatin1String
    kInvalidArgumentsText("[invalid tool arguments: could not parse code]");

// The lists below are built once: the loop asks for them for every key of every round.
// LiteLLM's INTERCEPTION_INTERNAL_PREFIXES (all four).
const QList<QLatin1String> &interceptionInternalPrefixes();
// LiteLLM's NON_CODE_INTERPRETER_INTERCEPTION_INTERNAL_PREFIXES (websearch, compression, headroom).
const QList<QLatin1String> &nonCodeInterpreterInternalPrefixes();
// "<prefix>_converted_stream" for each of the four prefixes.
const QList<QString> &convertedStreamKeys();
// Stream-options stashes in lookup order: code interpreter, headroom, websearch.
const QList<QLatin1String> &streamOptionsStashKeys();
// LiteLLM's `agentic_loop_internal_litellm_params`, in its pinned order: travel with a call,
// never belong in a provider request body.
const QList<QLatin1String> &agenticLoopInternalLitellmParams();

// Plain prefix match: true when `key` starts with any of `prefixes`.
bool isInterceptionInternalKey(const QString &key);
bool isInterceptionInternalKey(const QString &key, const QList<QLatin1String> &prefixes);

// A loop-control key a client must never set: starts with `_agentic_loop` or is
// `max_agentic_loops`.
bool isAgenticLoopControlKey(const QString &key);

// Keys that belong to the proxy/LiteLLM layer, not to the provider: every interception key,
// every loop control, litellm_metadata and the bookkeeping keys LiteLLM passes as kwargs
// (litellm_call_id, custom_llm_provider, user_api_key_hash, ...). Used to split a flat request
// into provider params and litellm kwargs and to build the body actually sent upstream.
bool isLitellmOnlyKey(const QString &key);
// `request` without any litellm-only key: what may be sent to the provider.
QJsonObject providerRequestBody(const QJsonObject &request);

// Python truthiness of a JSON value: missing/null/false/0/""/[]/{} are falsy.
bool isTruthy(const QJsonValue &value);

// Any converted-stream flag set (LiteLLM's converted_stream_requested).
bool convertedStreamRequested(const QJsonObject &params);
// LiteLLM's as_converted_stream: copy without stream_options, stream forced off,
// "<prefix>_converted_stream": true, and "<prefix>_stream_options" holding the caller's
// stream_options when it was present and not null.
QJsonObject asConvertedStream(const QJsonObject &params, QLatin1String prefix);
// First non-null stashed stream_options (code interpreter, headroom, websearch), if any.
std::optional<QJsonValue> stashedStreamOptions(const QJsonObject &params);

} // namespace loopscope::keys
