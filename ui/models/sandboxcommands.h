#pragma once

#include <QObject>
#include <QPointer>

#include <functional>

namespace loopscope {

class SandboxRegistry;

// The window's intents on sandboxes. The registry lives on the proxy thread, so each command is
// a queued call into it: Delete is the very registry removal `DELETE /v1/containers/{id}` makes,
// and the panel learns the result from the registry's later Sandbox* event.
//
// Two ways to reach it. The app's: a dispatcher (ProxyService::withRegistry through
// ServiceProxyControl::attachWindow) that queues the work to the proxy thread and runs it there
// only while the registry exists; this side holds no pointer to the registry at all, only
// whether a proxy runs (setAvailable). Tests, whose registry outlives the commands, hand it over
// directly (the constructor, setRegistry).
class SandboxCommands : public QObject {
    Q_OBJECT
public:
    // `registry` (tests): one that outlives these commands, reached by queued calls on its
    // thread; null: none yet.
    explicit SandboxCommands(SandboxRegistry *registry = nullptr, QObject *parent = nullptr);

    bool isAvailable() const { return m_dispatch ? m_available : !m_registry.isNull(); }
    // Tests: a registry made again (or none), as for the constructor.
    void setRegistry(SandboxRegistry *registry);
    // Runs `work` on the registry's thread with the registry, if it still exists there; false
    // when there is no proxy to ask. The registry lives on the proxy thread, where it may be
    // deleted at any moment (Stop), so the window must never hold a pointer to it — not even
    // to learn its thread for invokeMethod. When set, every command goes through it.
    using Dispatcher = std::function<bool(std::function<void(SandboxRegistry *)> work)>;
    void setDispatcher(Dispatcher dispatcher) { m_dispatch = std::move(dispatcher); }
    // With a dispatcher: whether a proxy (and so a registry) runs behind it.
    void setAvailable(bool available);

    // Runs `work` with the registry on its thread (through the dispatcher when set); false when
    // there is no registry to ask. For other window commands on the proxy's objects.
    bool post(std::function<void(SandboxRegistry *)> work) { return dispatch(std::move(work)); }

public slots:
    // Returns false when there is no registry to ask (the request is dropped).
    bool deleteSandbox(const QString &containerId);
    bool deleteAll();

signals:
    void availabilityChanged(bool available);

private:
    QPointer<SandboxRegistry> m_registry; // same thread only, without a dispatcher
    Dispatcher m_dispatch;
    bool m_available = false; // with a dispatcher
    // Queued on the registry's thread through the dispatcher, or (tests, one thread) directly.
    bool dispatch(std::function<void(SandboxRegistry *)> work);
};

} // namespace loopscope
