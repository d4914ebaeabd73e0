#pragma once

#include <QObject>
#include <QPointer>

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

public slots:
    // Returns false when there is no registry to ask (the request is dropped).
    bool deleteSandbox(const QString &containerId);
    bool deleteAll();

signals:
    void availabilityChanged(bool available);

private:
    QPointer<SandboxRegistry> m_registry;
};

} // namespace loopscope
