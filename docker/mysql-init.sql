-- The connector user with exactly the documented grants, and an admin user for the tests.
CREATE USER 'cdc'@'%' IDENTIFIED BY 'cdc-secret';
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES ON *.* TO 'cdc'@'%';
CREATE USER 'admin'@'%' IDENTIFIED BY 'admin-secret';
GRANT ALL PRIVILEGES ON *.* TO 'admin'@'%' WITH GRANT OPTION;
CREATE DATABASE IF NOT EXISTS inventory;
