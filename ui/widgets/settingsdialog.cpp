#include "widgets/settingsdialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QUrl>
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

// "demo" or an http(s) URL with a host; what ProxyConfig::routeForUpstream accepts.
bool isUsableUpstream(const QString &text) {
    if (text == QLatin1String("demo"))
        return true;
    const QUrl url(text, QUrl::StrictMode);
    return url.isValid() && !url.host().isEmpty() &&
           (url.scheme() == QLatin1String("http") || url.scheme() == QLatin1String("https"));
}

} // namespace

SettingsDialog::SettingsDialog(const SettingsSources &sources, int sessionSandboxes,
                               QWidget *parent)
    : QDialog(parent)
    , m_sources(sources)
    , m_sessionSandboxes(sessionSandboxes)
    , m_restartNote(new QLabel(this))
    , m_error(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this)) {
    const AppSettings s = sources.values().normalized();
    setWindowTitle(tr("Settings"));
    m_confirm = [this](const QString &warning) {
        return QMessageBox::question(this, tr("Restart the proxy?"), warning,
                                     QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
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
    m_theme = new QComboBox(this);
    m_theme->addItem(tr("System"), QStringLiteral("system"));
    m_theme->addItem(tr("Light"), QStringLiteral("light"));
    m_theme->addItem(tr("Dark"), QStringLiteral("dark"));
    m_theme->setCurrentIndex(qMax(0, m_theme->findData(s.theme)));

    m_editors = {m_port,     m_upstream, m_upstreamTimeout, m_executionTimeout,
                 m_maxLoops, m_poolSize, m_retention,       m_theme};
    auto *grid = new QGridLayout;
    grid->addWidget(new QLabel(tr("<b>Setting</b>"), this), 0, 0);
    grid->addWidget(new QLabel(tr("<b>In effect</b>"), this), 0, 1);
    grid->addWidget(new QLabel(tr("<b>From</b>"), this), 0, 2);
    for (int i = 0; i < AppSettings::kFieldCount; ++i) {
        const auto field = Field(i);
        QWidget *editor = m_editors[size_t(i)];
        QString label = SettingsSources::label(field);
        if (field == Field::Port)
            label = tr("Port (%1)").arg(QStringLiteral("127.0.0.1"));
        auto *name = new QLabel(label + u':', this);
        name->setBuddy(editor);
        auto *source = new QLabel(sources.describe(field), this);
        source->setObjectName(QStringLiteral("source-") + QString::number(i));
        source->setForegroundRole(QPalette::PlaceholderText);
        source->setWordWrap(true);
        m_sourceLabels[size_t(i)] = source;
        if (sources.isLocked(field)) {
            // Read-only, not disabled: the value stays readable and copyable.
            if (auto *spin = qobject_cast<QSpinBox *>(editor)) {
                spin->setReadOnly(true);
                spin->setButtonSymbols(QAbstractSpinBox::NoButtons);
            } else if (auto *edit = qobject_cast<QLineEdit *>(editor)) {
                edit->setReadOnly(true);
            } else {
                editor->setEnabled(false);
            }
            const QString reason = sources.lockReason(field);
            editor->setToolTip(reason);
            source->setToolTip(reason);
            source->setText(QStringLiteral("🔒 ") + source->text());
        } else if (SettingsSources::restartsProxy(field)) {
            editor->setToolTip(tr("Changing it restarts the proxy."));
        } else {
            editor->setToolTip(tr("Applies at once; the proxy keeps running."));
        }
        grid->addWidget(name, i + 1, 0);
        grid->addWidget(editor, i + 1, 1);
        grid->addWidget(source, i + 1, 2);
    }
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(2, 1);

    auto *note = new QLabel(tr("Values set on the command line or in the config file (🔒) are "
                               "shown read-only. Proxy settings take effect by restarting the "
                               "proxy; OK says so first. Window settings apply at once."),
                            this);
    note->setWordWrap(true);
    m_restartNote->setWordWrap(true);
    m_restartNote->setStyleSheet(QStringLiteral("font-weight: bold;"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_error->hide();
    connect(m_buttons, &QDialogButtonBox::accepted, this, &SettingsDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    for (QSpinBox *box :
         {m_port, m_upstreamTimeout, m_executionTimeout, m_maxLoops, m_poolSize, m_retention})
        connect(box, &QSpinBox::valueChanged, this, &SettingsDialog::updateRestartNote);
    connect(m_upstream, &QLineEdit::textChanged, this, &SettingsDialog::updateRestartNote);
    connect(m_theme, &QComboBox::currentIndexChanged, this, &SettingsDialog::updateRestartNote);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(grid);
    layout->addWidget(note);
    layout->addWidget(m_restartNote);
    layout->addWidget(m_error);
    layout->addWidget(m_buttons);
    updateRestartNote();
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
    s.theme = m_theme->currentData().toString();
    return m_sources.accepted(s);
}

bool SettingsDialog::restartPending() const {
    return m_sources.needsRestart(settings());
}

void SettingsDialog::updateRestartNote() {
    const bool restart = restartPending();
    m_restartNote->setText(restart ? SettingsSources::restartWarning(m_sessionSandboxes)
                                   : QString());
    m_restartNote->setVisible(restart);
    m_buttons->button(QDialogButtonBox::Ok)->setText(restart ? tr("Restart proxy") : tr("OK"));
}

void SettingsDialog::accept() {
    const AppSettings s = settings();
    if (!m_sources.isLocked(Field::Upstream) && !isUsableUpstream(s.upstream)) {
        m_error->setText(
            tr("Upstream: '%1' is neither \"demo\" nor an http(s) URL.").arg(s.upstream));
        m_error->show();
        m_upstream->setFocus();
        return;
    }
    if (m_sources.needsRestart(s) &&
        !m_confirm(SettingsSources::restartWarning(m_sessionSandboxes)))
        return; // stays open, nothing applied
    QDialog::accept();
}

} // namespace loopscope
