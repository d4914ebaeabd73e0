#pragma once

#include <QObject>
#include <QPointer>

#include <functional>

namespace loopscope {

class SandboxRegistry;

// The window's intents on sandboxes. The registry lives on the proxy thread, so each command is
// a queued call into it: Delete is the very registry removal `DELETE /v1/containers/{id}` makes,
// and the panel learns the result from the registry's later Sandbox* event.
class SandboxCommands : public QObject {
    Q_OBJECT
public:
    explicit SandboxCommands(SandboxRegistry *registry, QObject *parent = nullptr);

    bool isAvailable() const { return !m_registry.isNull(); }
    // A restarted proxy brings a new registry (or none while stopped).
    void setRegistry(SandboxRegistry *registry);
    // Runs `work` on the registry's thread with the registry, if it still exists there; false
    // when there is no proxy to ask. The registry lives on the proxy thread, where it may be
    // deleted at any moment (Stop), so the window must never dereference a pointer to it —
    // not even to learn its thread for invokeMethod. When set, every command goes through it.
    using Dispatcher = std::function<bool(std::function<void(SandboxRegistry *)> work)>;
    void setDispatcher(Dispatcher dispatcher) { m_dispatch = std::move(dispatcher); }

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
    QPointer<SandboxRegistry> m_registry;
    Dispatcher m_dispatch;
    // Queued on the registry's thread through the dispatcher, or (tests, one thread) directly.
    bool dispatch(std::function<void(SandboxRegistry *)> work);
};

} // namespace loopscope
