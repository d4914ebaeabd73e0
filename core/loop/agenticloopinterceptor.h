#pragma once

#include "loop/pausebroker.h"
#include "loop/requestinterceptor.h"

#include <QObject>
#include <QPointer>

namespace loopscope {

class CodeInterpreterInterception;
class EventBus;
class UpstreamClient;

// Claims /v1/responses and /v1/chat/completions requests that declare the hosted
// code_interpreter tool (when interception is enabled for the route's provider) and runs each
// through its own AgenticLoop. Everything else stays pass-through.
class AgenticLoopInterceptor : public QObject, public RequestInterceptor {
    Q_OBJECT
public:
    AgenticLoopInterceptor(CodeInterpreterInterception *interception, UpstreamClient *upstream,
                           EventBus *events, QObject *parent = nullptr);

    bool accepts(const ProxyRequest &request) const override;
    void handle(ProxyRequest request, ResponseSink *sink) override;

    int activeLoops() const { return m_active; }
    // Breakpoints for every loop started from now on (none without a broker).
    void setPauseBroker(PauseBroker *broker) { m_broker = broker; }
    PauseBroker *pauseBroker() const { return m_broker; }

private:
    QPointer<CodeInterpreterInterception> m_interception;
    QPointer<UpstreamClient> m_upstream;
    QPointer<EventBus> m_events;
    QPointer<PauseBroker> m_broker;
    int m_active = 0;
};

} // namespace loopscope
