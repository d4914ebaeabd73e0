#include "loop/agenticloopinterceptor.h"

#include "http/responsesink.h"
#include "inspect/eventbus.h"
#include "interception/anthropiccodeexecution.h"
#include "interception/codeinterpreterinterception.h"
#include "interception/interceptionkeys.h"
#include "loop/agenticloop.h"
#include "loop/pausebroker.h"
#include "upstream/upstreamclient.h"

namespace loopscope {

AgenticLoopInterceptor::AgenticLoopInterceptor(CodeInterpreterInterception *interception,
                                               UpstreamClient *upstream, EventBus *events,
                                               QObject *parent)
    : QObject(parent)
    , m_interception(interception)
    , m_upstream(upstream)
    , m_events(events) {}

bool AgenticLoopInterceptor::accepts(const ProxyRequest &request) const {
    if (!m_interception || !m_upstream)
        return false;
    const InterceptionSettings &settings = m_interception->settings();
    const bool declares = request.surface == ApiSurface::Messages
                              ? !AnthropicCodeExecution::declaredToolType(
                                     request.body.value(QStringLiteral("tools")).toArray())
                                     .isEmpty()
                              : request.declaresToolType(keys::kNativeCodeInterpreterType);
    return settings.enabled && declares &&
           settings.allowsProvider(AgenticLoop::providerFor(request));
}

void AgenticLoopInterceptor::handle(ProxyRequest request, ResponseSink *sink) {
    auto *loop =
        new AgenticLoop(std::move(request), sink, m_interception, m_upstream, m_events, this);
    loop->setPauseBroker(m_broker);
    ++m_active;
    connect(loop, &AgenticLoop::done, this, [this] { --m_active; });
    loop->start();
}

} // namespace loopscope
