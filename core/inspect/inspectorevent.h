#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QMetaType>
#include <QString>

namespace loopscope {

// What happened, as one immutable value. Core publishes these; the window only ever sees them
// (copied across threads through queued signals), so everything the panels show must be here.
//
// Payload keys per kind (all optional unless noted; EventBus::publish masks secrets in them):
//  RequestStarted   method, path, api ("responses"|"chat_completions"|"other"), model, stream,
//                   intercepted (bool), identity (masked, last 4), sessionId, request (client JSON)
//  UpstreamCall     request (JSON sent upstream), response (JSON received), status, latencyMs, url,
//                   usage {input_tokens, output_tokens, total_tokens}, error
//  UpstreamCallStarted  request (JSON sent upstream, masked), url: published when a loop's model
//                   call is sent, so a running flow shows it while the model thinks; the
//                   iteration's UpstreamCall follows with the answer
//  CodeRunStarted   callId, code, containerId (published when the code starts running)
//  CodeRunOutput    callId, stream ("stdout"|"stderr"), text: a chunk as the code printed it
//                   (coalesced and bounded by the backend); the final CodeExecuted is unchanged
//  CodeExecuted     callId, code, stdout, stderr, error {name,value,traceback}, output (string fed
//                   back to the model), durationMs, containerId, sessionId, truncated, timedOut,
//                   images [{name,mime,url (data: URL)}], files [container.file written by the run]
//  Sandbox*         containerId (required), provider, sessionId, identity (masked), ephemeral,
//                   createdMs, lastUsedMs, expiresAtMs, runs, error (SandboxDeleteFailed)
//  OutputsInjected  items (array of code_interpreter_call items exactly as sent)
//  RequestFinished  status, durationMs, iterations, codeRuns, usage, response (final JSON),
//                   incompleteReason
//  RequestFailed    status, message, durationMs, iterations
//  Log              level ("info"|"warning"|"error"), message
//
// Flow events (issue 11; published for EVERY client exchange by ProxyServer, HttpConnection's
// early rejections and ResponseSink; core/record's FlowRecorder folds them into flows). Headers
// are JSON objects {lower-case name: value}, masked by CredentialPolicy::maskHeaders. Bodies and
// chunks travel as bytes in `raw` (implicitly shared, never copied or parsed on the proxy
// thread); the recorder makes them JSON or text:
//  ClientRequest       method, path, query, headers, body, api ("responses"|"chat_completions"|
//                      "models"|"containers"|"other"), model, stream (bool), identity (masked).
//                      The first event of every flow: on the plain pass-through path published
//                      once the request has gone upstream, elsewhere before anything else
//                      happens (ResponseSink::holdEvent). raw = the request body as received.
//  UpstreamRequest     pass-through only: url, method, headers, passThrough (true); raw = body
//  UpstreamResponse    pass-through only, for the first upstream bytes (a one-shot answer's
//                      once it has been relayed; always before the ClientResponse): status,
//                      headers, stream (bool), latencyMs (time to the upstream's answer); the bytes
//                      themselves are the ClientResponse* events that follow (same bytes)
//  ClientResponse      status, headers, stream (bool); raw = the body of a one-shot answer
//  ClientResponseChunk raw = bytes written to the client, as written (SSE framing included;
//                      decoded into events on the store thread)
//  ExchangeFinished    status (499 when the client went away first), durationMs, ttfbMs,
//                      overheadMs, bytesSent, clientGone (bool), aborted (bool: cut mid-stream)
//                      — the last event of every flow.
// Breakpoints (issue 12; published by loop/PauseBroker):
//  Paused   the pause exactly as GET /loopscope/v1/paused lists it: id, flow_id, kind ("code"|
//           "upstream_request"|"upstream_response"), iteration, call_id, code, body, paused_at
//  Resumed  the same plus action ("continue"|"deny"|"abort"), decision ("continued"|"edited"|
//           "denied"|"aborted"|"timed_out"), resolved_at, and code/body/message as resolved
// Admission (published by the loop while its plan waits for sandbox.max_live to free a slot):
//  SandboxWaiting / SandboxWaitEnded   no data; the flow's state is "waiting" between them
// The loop's RequestFailed carries incompleteReason "client_closed" when the client hung up.
// The loop's RequestStarted / UpstreamCall / CodeExecuted / RequestFinished / RequestFailed keep
// their payloads; the recorder turns UpstreamCall into upstream_request + upstream_response hops.
// FlowStore re-emits flow.started / flow.updated / flow.finished as Qt signals with summaries.
struct InspectorEvent {
    enum class Kind {
        RequestStarted,
        UpstreamCall,
        CodeRunStarted,
        CodeRunOutput,
        CodeExecuted,
        SandboxCreated,
        SandboxReused,
        SandboxDeleted,
        SandboxEvicted,
        SandboxExpired,
        SandboxDeleteFailed,
        OutputsInjected,
        RequestFinished,
        RequestFailed,
        Log,
        ClientRequest,
        UpstreamRequest,
        UpstreamResponse,
        ClientResponse,
        ClientResponseChunk,
        ExchangeFinished,
        Paused,
        Resumed,
        UpstreamCallStarted,
        SandboxWaiting,   // the flow waits for a live sandbox slot (sandbox.max_live)
        SandboxWaitEnded, // ... no longer (admitted, refused or left)
    };

    quint64 sequence = 0;   // monotonic, assigned by the EventBus
    qint64 timestampMs = 0; // wall clock, assigned by the EventBus (when published, or when
                            // handed to it for a deferred publish)
    Kind kind = Kind::Log;
    QString requestId;  // flow id; empty for events not tied to a request (sandbox expiry, logs)
    int iteration = -1; // loop iteration (0 = first upstream call), -1 when not applicable
    QJsonObject data;
    QByteArray raw; // bodies and stream chunks of flow events (see above); empty otherwise

    static InspectorEvent make(Kind kind, const QString &requestId = {}, int iteration = -1,
                               const QJsonObject &data = {});
    static QString kindName(Kind kind);
    bool isSandboxEvent() const;

    friend bool operator==(const InspectorEvent &, const InspectorEvent &) = default;
};

} // namespace loopscope

Q_DECLARE_METATYPE(loopscope::InspectorEvent)
