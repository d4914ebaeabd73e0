#pragma once

#include "models/appsettings.h"
#include "models/settingssources.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QObject>
#include <QStringList>
#include <QUrl>

namespace loopscope {

// What the window needs from the running proxy, implemented in app/ over the real server (which
// lives on its own thread: implementations forward start/stop there with queued calls and
// report back through stateChanged). Kept abstract so the window is tested without a proxy.
class ProxyControl : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    ~ProxyControl() override;

    // Where clients connect, without the /v1 suffix, e.g. http://127.0.0.1:4000. Meaningful
    // while running; the last or configured address otherwise.
    virtual QUrl listenUrl() const = 0;
    // "demo" or the upstream base URL.
    virtual QString upstream() const = 0;
    virtual bool isRunning() const = 0;
    // Sandbox backend name for the status bar, e.g. "local (bubblewrap)".
    virtual QString sandboxBackend() const = 0;
    // SandboxBackend::selfTest() as text: empty when the backend is available, else the
    // problems (one per line) and what fixes them.
    virtual QString sandboxSelfTest() const = 0;
    // Config models Loopscope cannot reach, one "model 'x' (…, line N) skipped: why" line each.
    virtual QStringList skippedModels() const { return {}; }

    // The settings in effect and where each came from (the Settings dialog shows them).
    // Default: the saved settings, for a proxy that knows no command line.
    virtual SettingsSources settingsInEffect() const;

    // The model name the Connect-an-SDK snippets use (the demo model's id by default).
    virtual QString suggestedModel() const;

    // The base URL SDKs use: listenUrl() + "/v1".
    QUrl baseUrl() const;

public slots:
    virtual void start() = 0;
    virtual void stop() = 0;
    // Settings accepted in the dialog: values locked by the command line or config file are
    // ignored; a change of a proxy setting restarts the proxy, nothing else does.
    virtual void applySettings(const loopscope::AppSettings &settings);
    // Breakpoints (issue 12), forwarded to the proxy's PauseBroker; no-ops without a proxy.
    // The toolbar's "Pause before code runs" (the `code` breakpoint, other settings kept).
    virtual void setPauseBeforeCode(bool on);
    // `decision` as POST /loopscope/v1/paused/{id} takes it.
    virtual void resolvePause(const QString &pauseId, const QJsonObject &decision);
    // "Auto-approve this session": later code pauses of it are skipped.
    virtual void autoApprovePauses(const QString &sessionOrFlowId);
    // Replays a recorded flow through the proxy as a new flow linked to it (replay_of), with
    // `editedBody` as the client request body when it is an object. The answer comes as
    // replayFinished. Without a proxy: replayFinished with an error.
    virtual void replayFlow(const QString &flowId, const QJsonValue &editedBody);

signals:
    void stateChanged();
    void errorOccurred(const QString &message);
    // `newFlowId` is empty when the replay could not start; `error` says why.
    void replayFinished(const QString &flowId, const QString &newFlowId, const QString &error);
    // The proxy listens again after a restart the settings asked for (the new address).
    void restarted(const QUrl &listenUrl);
};

} // namespace loopscope
