#pragma once

#include <QFuture>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

class QTimer;

namespace loopscope {

class EventBus;

// Where a loop may stop (../shared/spec/control-api.md, "Breakpoints").
enum class PauseKind { Code, UpstreamRequest, UpstreamResponse };

// GET|PUT /loopscope/v1/breakpoints. Off by default; `match` keys that are set must all match.
struct BreakpointSettings {
    bool code = false;
    bool upstreamRequest = false;
    bool upstreamResponse = false;
    std::optional<QString> matchModel;
    std::optional<QString> matchSessionId;
    std::optional<QString> codeRegex;
    double timeoutS = 600;
    QString onTimeout = QStringLiteral("deny"); // "deny" | "continue" | "abort"

    // PUT semantics: keys left out take the defaults. Returns the error text for bad input.
    static std::optional<BreakpointSettings> fromJson(const QJsonObject &json, QString *error);
    QJsonObject toJson() const;
    bool enabled(PauseKind kind) const;
};

// What the loop is about to do, for the person deciding.
struct PauseContext {
    PauseKind kind = PauseKind::Code;
    QString flowId;
    int iteration = 0;
    QString callId;
    QString code;      // kind code (and upstream_response: the first code the model wrote)
    QJsonObject body;  // upstream kinds: the body about to be sent / just received
    QString model;     // the client's model (match.model)
    QString sessionId; // match.session_id; also the key of "auto-approve this session"
};

// How a pause ended. `decision` is what the code_run hop records.
struct PauseDecision {
    enum class Action { Continue, Deny, Abort };
    Action action = Action::Continue;
    QString code;                    // kind code: the code to run (edited or as is)
    std::optional<QJsonObject> body; // upstream kinds: the edited body, when one was given
    QString message;                 // deny: what the model gets as the tool output;
                                     // abort by abortAll: why (empty: the user aborted)
    QString decision;                // continued|edited|denied|aborted|timed_out; "" = no pause
    QString editedFrom;              // kind code, edited: the code the model wrote
};

// Holds the pending pauses of every loop on the proxy thread. A loop asks wants() and then
// awaits pause(); the window (queued through the proxy control) and the control API call
// resolve(); timeouts and client hang-ups end pauses through the same path. Each pause and
// each resolution is published as an InspectorEvent (Paused / Resumed), so the window, the
// flow store and GET /loopscope/v1/events see one truth. Lives on the proxy thread.
class PauseBroker : public QObject {
    Q_OBJECT
public:
    enum class ResolveStatus { Resolved, NotFound, AlreadyResolved, Invalid };
    struct ResolveResult {
        ResolveStatus status = ResolveStatus::NotFound;
        QString error;     // Invalid: why
        QJsonObject pause; // Resolved / AlreadyResolved: the pause with its resolution
    };

    static constexpr int kDefaultHeartbeatMs = 10 * 1000;
    static inline const QString kDefaultDenyMessage =
        QStringLiteral("User declined to run this code.");

    explicit PauseBroker(EventBus *events = nullptr, QObject *parent = nullptr);
    ~PauseBroker() override;

    BreakpointSettings settings() const { return m_settings; }
    void setSettings(const BreakpointSettings &settings);

    // Whether a loop at this point should pause (kind enabled, match, no auto-approval).
    bool wants(const PauseContext &context) const;
    // Registers a pause and returns its decision; the future finishes on this thread.
    QFuture<PauseDecision> pause(const PauseContext &context);

    // {"action":"continue"|"deny"|"abort","code"?,"body"?,"message"?} as the control API takes it.
    ResolveResult resolve(const QString &id, const QJsonObject &request);
    // Ends every pending pause of `flowId` as aborted (its client hung up, or the loop died).
    void abortFlow(const QString &flowId);
    // Ends every pending pause as aborted because the proxy is going away: the decision's
    // `message` carries `reason`, which the loop fails its request with.
    void abortAll(const QString &reason);
    // "Auto-approve this session": later code pauses of this session (or flow) are skipped.
    void setAutoApprove(const QString &sessionOrFlowId, bool on);
    bool isAutoApproved(const QString &sessionOrFlowId) const;

    // The pending pauses, oldest first, as GET /loopscope/v1/paused lists them.
    // Masked with the bus's credential policy: the list is shown (control API, MCP), while the
    // pause itself keeps the code and body that run on "continue".
    QJsonArray pending() const;
    int pendingCount() const { return int(m_pending.size()); }

    // How often a paused streaming client gets ": paused" (a test seam; 10 s by default).
    int heartbeatIntervalMs() const { return m_heartbeatMs; }
    void setHeartbeatIntervalMs(int ms) { m_heartbeatMs = ms; }

    static QString kindName(PauseKind kind);

signals:
    void settingsChanged(const QJsonObject &settings);
    void paused(const QJsonObject &pause);
    void resumed(const QJsonObject &pause);

private:
    struct Pending;
    void finish(const QString &id, PauseDecision decision, const QJsonObject &resolution);
    void onTimeout(const QString &id);
    QJsonObject shown(const QJsonObject &pause) const;

    QPointer<EventBus> m_events;
    BreakpointSettings m_settings;
    QHash<QString, std::shared_ptr<Pending>> m_pending;
    QStringList m_order;                    // pending ids, oldest first
    QHash<QString, QJsonObject> m_resolved; // recent resolutions (409 already resolved)
    QStringList m_resolvedOrder;            // bounded history of m_resolved
    QSet<QString> m_autoApproved;
    int m_heartbeatMs = kDefaultHeartbeatMs;
};

} // namespace loopscope
