#include "widgets/proxycontrol.h"

#include "models/connectsnippets.h"

#include <QSettings>

namespace loopscope {

ProxyControl::~ProxyControl() = default;

QUrl ProxyControl::baseUrl() const {
    QUrl url = listenUrl();
    QString path = url.path();
    while (path.endsWith(u'/'))
        path.chop(1);
    url.setPath(path + QStringLiteral("/v1"));
    return url;
}

SettingsSources ProxyControl::settingsInEffect() const {
    return SettingsSources::fromSaved(QSettings());
}

QString ProxyControl::suggestedModel() const {
    return ConnectSnippets::demoModel();
}

void ProxyControl::applySettings(const AppSettings &) {}

void ProxyControl::setPauseBeforeCode(bool) {}

void ProxyControl::resolvePause(const QString &, const QJsonObject &) {}

void ProxyControl::autoApprovePauses(const QString &) {}

void ProxyControl::replayFlow(const QString &flowId, const QJsonValue &) {
    emit replayFinished(flowId, {}, tr("Replay needs the proxy running in this process."));
}

} // namespace loopscope
