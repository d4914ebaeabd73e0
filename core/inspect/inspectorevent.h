#pragma once

#include <QJsonObject>
#include <QMetaType>
#include <QString>

namespace loopscope {

// What happened, as one immutable value. Core publishes these; the window only ever sees them
// (copied across threads through queued signals), so everything the panels show must be here.
//
// Payload keys per kind (all optional unless noted; secrets are already masked by the publisher):
//  RequestStarted   method, path, api ("responses"|"chat_completions"|"other"), model, stream,
//                   intercepted (bool), identity (masked, last 4), sessionId, request (client JSON)
//  UpstreamCall     request (JSON sent upstream), response (JSON received), status, latencyMs,
//                   usage {input_tokens, output_tokens, total_tokens}, error
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
    };

    quint64 sequence = 0;   // monotonic, assigned by the EventBus
    qint64 timestampMs = 0; // wall clock, assigned by the EventBus
    Kind kind = Kind::Log;
    QString requestId;  // flow id; empty for events not tied to a request (sandbox expiry, logs)
    int iteration = -1; // loop iteration (0 = first upstream call), -1 when not applicable
    QJsonObject data;

    static InspectorEvent make(Kind kind, const QString &requestId = {}, int iteration = -1,
                               const QJsonObject &data = {});
    static QString kindName(Kind kind);
    bool isSandboxEvent() const;

    friend bool operator==(const InspectorEvent &, const InspectorEvent &) = default;
};

} // namespace loopscope

Q_DECLARE_METATYPE(loopscope::InspectorEvent)
