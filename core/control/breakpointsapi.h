#pragma once

#include "http/httprequest.h"

#include <QObject>
#include <QPointer>
#include <QStringList>

namespace loopscope {

class PauseBroker;
class ResponseSink;

// The breakpoint routes of the control API (../shared/spec/control-api.md, "Breakpoints"):
//   GET|PUT /loopscope/v1/breakpoints   the settings (PUT replaces them, keys left out = defaults)
//   GET     /loopscope/v1/paused        the pending pauses
//   POST    /loopscope/v1/paused/{id}   resolve one: 200 resolved pause, 404 unknown, 409 done
// ControlApi hands these routes here after its access checks. The broker lives on the proxy
// thread like this object, so calls are direct. Without a broker every route answers 503.
class BreakpointsApi : public QObject {
    Q_OBJECT
public:
    explicit BreakpointsApi(QObject *parent = nullptr);

    void setBroker(PauseBroker *broker);
    PauseBroker *broker() const;

    // `parts`: the path below /loopscope/v1, split at '/' (ControlRoute decides which are ours).
    void handle(const HttpRequest &request, const QStringList &parts, ResponseSink *sink);

private:
    QPointer<PauseBroker> m_broker;
};

} // namespace loopscope
