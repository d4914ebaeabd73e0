#include "widgets/settingsdialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QVBoxLayout>

namespace loopscope {

namespace {

QSpinBox *makeSpin(QWidget *parent, int min, int max, int value, const QString &suffix = {}) {
    auto *box = new QSpinBox(parent);
    box->setRange(min, max);
    box->setValue(value);
    box->setSuffix(suffix);
    return box;
}

} // namespace

SettingsDialog::SettingsDialog(const AppSettings &initial, QWidget *parent)
    : QDialog(parent) {
    const AppSettings s = initial.normalized();
    setWindowTitle(tr("Settings"));
    m_port = makeSpin(this, 0, 65535, s.port);
    m_port->setSpecialValueText(tr("any free port"));
    m_upstream = new QLineEdit(s.upstream, this);
    m_upstream->setPlaceholderText(tr("demo, or e.g. https://api.openai.com/v1"));
    m_upstreamTimeout = makeSpin(this, 1, 3600, s.upstreamTimeoutSeconds, tr(" s"));
    m_executionTimeout = makeSpin(this, 1, 3600, s.executionTimeoutSeconds, tr(" s"));
    m_maxLoops = makeSpin(this, 1, 100, s.maxLoops);
    m_poolSize = makeSpin(this, 0, 32, s.sandboxPoolSize);
    m_retention = makeSpin(this, 100, 100000, s.retention, tr(" requests"));
    m_retention->setSingleStep(1000);

    auto *form = new QFormLayout;
    form->addRow(tr("Port (127.0.0.1):"), m_port);
    form->addRow(tr("Upstream:"), m_upstream);
    form->addRow(tr("Upstream timeout:"), m_upstreamTimeout);
    form->addRow(tr("Code execution timeout:"), m_executionTimeout);
    form->addRow(tr("Max loop iterations:"), m_maxLoops);
    form->addRow(tr("Warm sandbox pool:"), m_poolSize);
    form->addRow(tr("Requests kept in the window:"), m_retention);
    auto *note = new QLabel(tr("Port and upstream changes restart the proxy. Command-line "
                               "options override these settings."),
                            this);
    note->setWordWrap(true);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(buttons);
}

AppSettings SettingsDialog::settings() const {
    AppSettings s;
    s.port = m_port->value();
    s.upstream = m_upstream->text();
    s.upstreamTimeoutSeconds = m_upstreamTimeout->value();
    s.executionTimeoutSeconds = m_executionTimeout->value();
    s.maxLoops = m_maxLoops->value();
    s.sandboxPoolSize = m_poolSize->value();
    s.retention = m_retention->value();
    return s.normalized();
}

} // namespace loopscope
