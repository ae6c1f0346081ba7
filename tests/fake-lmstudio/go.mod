module sunny/fakelmstudio

go 1.19
