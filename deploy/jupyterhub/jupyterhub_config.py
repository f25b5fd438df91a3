# JupyterHub for one class of autograd_lab on one machine (see README.md next to this file).
#
# Start it as root (it must switch to each student's Unix user):
#     jupyterhub -f /etc/jupyterhub/jupyterhub_config.py
# Set AUTOGRAD_LAB_INSTRUCTOR to the instructor's user name (default: instructor).
import os
import sys

c = get_config()  # noqa: F821 (given by JupyterHub when it reads this file)

COURSE_ID = "autograd_lab"
INSTRUCTOR = os.environ.get("AUTOGRAD_LAB_INSTRUCTOR", "instructor")

# -- network ---------------------------------------------------------------------------------
# The proxy listens on port 8000 of every interface; put HTTPS in front of it (a reverse
# proxy such as nginx or caddy holding the certificate), or give the certificate here:
#     c.JupyterHub.ssl_cert = "/etc/letsencrypt/live/HOST/fullchain.pem"
#     c.JupyterHub.ssl_key = "/etc/letsencrypt/live/HOST/privkey.pem"
c.JupyterHub.bind_url = "http://:8000"
c.JupyterHub.hub_ip = "127.0.0.1"  # the hub's own API stays on loopback
c.JupyterHub.db_url = "sqlite:////srv/jupyterhub/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "/srv/jupyterhub/jupyterhub_cookie_secret"

# -- who may log in --------------------------------------------------------------------------
# PAM: students log in with the password of their Unix account on this machine. One Unix user
# per student is what nbgrader's exchange relies on: a submission's owner is its student id,
# and file permissions keep students out of each other's work. The instructor (an admin here)
# adds students from the hub's admin page or its REST API; the Unix account is created then.
# A university login (OAuthenticator, LTI 1.3 from the learning platform) replaces PAM without
# changing anything else, as long as the user names are valid Unix names.
c.JupyterHub.authenticator_class = "pam"
c.LocalAuthenticator.create_system_users = True
c.Authenticator.admin_users = {INSTRUCTOR}
c.Authenticator.allow_existing_users = True  # who the admin adds may log in

# -- where each student's server runs --------------------------------------------------------
# SystemdSpawner (pip install jupyterhub-systemdspawner) runs each server as a transient
# systemd unit under the student's own Unix user, with a memory and CPU cap, so one runaway
# training loop cannot take the machine from the class. The default LocalProcessSpawner also
# runs servers as the student's user but without limits; DockerSpawner and KubeSpawner run each
# server in a container (see README.md for Kubernetes).
c.JupyterHub.spawner_class = "systemdspawner.SystemdSpawner"
c.SystemdSpawner.mem_limit = "2G"
c.SystemdSpawner.cpu_limit = 1.0
c.SystemdSpawner.isolate_tmp = True
c.SystemdSpawner.isolate_devices = True
c.SystemdSpawner.disable_user_sudo = True
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]  # this environment's
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.notebook_dir = "~"

# -- the course ------------------------------------------------------------------------------
# nbgrader finds the instructor by this group name; the role lets the instructor see the class
# list and start or stop a student's server when something hangs before a deadline.
c.JupyterHub.load_groups = {f"formgrade-{COURSE_ID}": {"users": [INSTRUCTOR]}}
c.JupyterHub.load_roles = [{
    "name": f"instructor-{COURSE_ID}",
    "groups": [f"formgrade-{COURSE_ID}"],
    "scopes": ["admin-ui", "list:users", "read:users", "admin:servers"],
}]

# Servers idle for an hour are stopped (pip install jupyterhub-idle-culler), which frees the
# memory of students who closed their laptop without logging out.
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [sys.executable, "-m", "jupyterhub_idle_culler", "--timeout=3600"],
}]
c.JupyterHub.load_roles.append({
    "name": "idle-culler",
    "services": ["idle-culler"],
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
})
